// What each mesh axis's steps travel over (a gpu_mesh plan: NVLink within a host, the network
// across hosts, an NVLink domain across a GB200 rack's hosts), under both drawings of the pane.
import type { MeshInfo } from "../../wire";

/** Whether a link, as Python words it, leaves the hosts' fast fabric (the cost model's slow
 *  link: shardwidget.plan.gpu.GpuMeshInfo.network_axes reads the same word). */
export function crossesNetwork(link: string): boolean {
  return link.startsWith("network");
}

/** One line per mesh axis, "data=2: network (InfiniBand / Ethernet, across hosts)", the axes
 *  that cross the network marked; null where the mesh does not say. */
export function linksNote(doc: Document, mesh: MeshInfo | null): HTMLElement | null {
  const links = mesh?.axis_links;
  if (!mesh || !links || links.length !== mesh.axis_names.length) return null;
  return linksBox(doc, mesh, links);
}

/** The lines of linksNote (its own function: a mesh that says nothing of links never compiles it). */
function linksBox(doc: Document, mesh: MeshInfo, links: string[]): HTMLElement {
  const box = doc.createElement("div");
  box.className = "sw-mesh-links";
  box.title = "what a step along each mesh axis travels over";
  mesh.axis_names.forEach((name, i) => {
    const row = doc.createElement("div");
    const net = crossesNetwork(links[i]);
    row.className = net ? "sw-mesh-link sw-link-network" : "sw-mesh-link";
    row.dataset.axis = name;
    row.textContent = `${net ? "⇄ " : ""}${name}=${mesh.axis_sizes[i]}: ${links[i]}`;
    box.append(row);
  });
  return box;
}
