// A Cache Storage stand-in over a Map (the part of the Cache API the hub download uses): what was put is matched
// back as a fresh Response; `m` shows what is stored.
export function mapCache() {
  const m = new Map<string, Uint8Array>();
  return {
    m,
    async match(url: RequestInfo | URL) {
      const b = m.get(String(url));
      return b ? new Response(b.slice().buffer) : undefined;
    },
    async put(url: RequestInfo | URL, res: Response) {
      m.set(String(url), new Uint8Array(await res.arrayBuffer()));
    },
    async delete(url: RequestInfo | URL) {
      return m.delete(String(url));
    },
  };
}
