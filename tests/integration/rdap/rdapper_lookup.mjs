// Looks DOMAIN up over RDAP with rdapper (npm, pinned in scripts/install-deps.sh), a real
// client library, pointed at BASE_URL by bootstrap data of our own (RFC 9224 format) instead
// of IANA's, RDAP only, without following links (they point at hosts that do not exist).
// Prints one JSON line of what rdapper understood; exits 1 when the lookup failed.
//   NODE_PATH=$(npm root -g) node rdapper_lookup.mjs BASE_URL DOMAIN
import { createRequire } from "node:module";
import path from "node:path";

const [base, domain] = process.argv.slice(2);
const require = createRequire(path.join(process.env.NODE_PATH || "", "noop.js"));
const { lookup } = await import(require.resolve("rdapper"));
const tld = domain.split(".").pop();
const bootstrap = {
  version: "1.0",
  publication: "2026-01-01T00:00:00Z",
  services: [[[tld], [base]]],
};
const result = await lookup(domain, {
  rdapOnly: true,
  rdapFollowLinks: false,
  customBootstrapData: bootstrap,
  timeoutMs: 10000,
});
if (!result.ok) {
  console.log(JSON.stringify({ ok: false, error: result.error }));
  process.exit(1);
}
const r = result.record;
console.log(JSON.stringify({
  ok: true,
  domain: r.domain,
  registered: r.isRegistered,
  registrar: r.registrar && r.registrar.name,
  ianaId: r.registrar && r.registrar.ianaId,
  statuses: (r.statuses || []).map((s) => s.status),
  created: r.creationDate,
  expires: r.expirationDate,
  nameservers: (r.nameservers || []).map((n) => n.host),
  dnssec: r.dnssec && r.dnssec.enabled,
  ds: ((r.dnssec && r.dnssec.dsRecords) || []).length,
}));
