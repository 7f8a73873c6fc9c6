// The device groups of one collective, in colour: which devices talk to which. One colour per
// group (or per source -> target pair of a collective-permute).
import type { Collective } from "../wire";
import { oklchToHex } from "../shared/colors";

/** A colour per group: hues spread evenly for a few groups, by the golden angle for many. */
export function groupColor(g: number, nGroups: number): string {
  const hue = nGroups <= 12 ? (360 * g) / Math.max(1, nGroups) + 20 : (g * 137.508 + 20) % 360;
  // Alternate lightness for many groups, so neighbours of similar hue still differ.
  const L = nGroups <= 12 ? 0.72 : g % 2 ? 0.62 : 0.8;
  return oklchToHex(L, 0.15, hue);
}

export interface GroupPaint {
  /** Device id -> its group's colour. */
  colors: Map<number, string>;
  /** Device id -> "group 2 of 4 (devices 0, 4)" for a tooltip. */
  titles: Map<number, string>;
}

/** Colours for `groups` (lists of device ids). A device in several groups (a permute's source
 *  and target) takes its first group's colour; its title names every group it is in. */
export function groupPaint(groups: number[][], permute = false): GroupPaint {
  const colors = new Map<number, string>();
  const titles = new Map<number, string>();
  groups.forEach((g, i) => {
    const c = groupColor(i, groups.length);
    const what = permute
      ? `pair ${i + 1} of ${groups.length}: ${g[0]} → ${g[1]}`
      : `group ${i + 1} of ${groups.length}: devices ${g.join(", ")}`;
    for (const id of g) {
      if (!colors.has(id)) colors.set(id, c);
      const t = titles.get(id);
      titles.set(id, t ? `${t}\n${what}` : what);
    }
  });
  return { colors, titles };
}

/** A collective's groups in colour, or null when the payload left its groups out. */
export function collectivePaint(c: Collective | undefined, sets: number[][][] | undefined): GroupPaint | null {
  if (!c || c.group_set === undefined || c.group_set < 0 || !sets) return null;
  const groups = sets[c.group_set];
  return groups ? groupPaint(groups, c.kind === "collective-permute") : null;
}
