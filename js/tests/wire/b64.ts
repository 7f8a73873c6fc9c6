// Binary fields of generated fixtures: base64 text to the DataView the widget model carries.
export function b64(text: string): DataView {
  const s = atob(text);
  const u = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
  return new DataView(u.buffer);
}
