#!/usr/bin/env python3
"""An RDAP answer checker that shares no code with onepassd (tests and operators use it).

  rdap-check.py check KIND [--status N] [--lenient-abuse] [FILE]   (stdin without FILE)
      KIND: domain | nameserver | entity | help | search | error. Checks the JSON against
      RFC 9083 (required members, types, vCard/jCard shape) and the gTLD RDAP Response
      Profile (Feb 2024: conformance values, registrar entity with IANA ID, abuse contact,
      events, notices, RFC 8056 statuses, RFC 9537 redaction). Exit 0 if it passes, 1 with
      one line per problem if not.
  rdap-check.py diff --whois HOST:PORT --rdap URL [--db FILE --sample N] [DOMAIN...]
      Asks Whois (RFC 3912) and RDAP for each domain and compares the facts both give:
      registry ID, registrar name and IANA ID, dates, statuses, name servers, DS records.
      --db FILE --sample N: N domains spread evenly over the database file (Whois format).
"""
import argparse
import ipaddress
import json
import re
import socket
import sys
import urllib.error
import urllib.request

CONFORMANCE = {"rdap_level_0", "icann_rdap_response_profile_1",
               "icann_rdap_technical_implementation_guide_1"}
# RFC 8056 §2 (and the IANA RDAP JSON Values registry's status values).
RDAP_STATUSES = {
    "active", "inactive", "add period", "auto renew period", "client delete prohibited",
    "client hold", "client renew prohibited", "client transfer prohibited",
    "client update prohibited", "pending create", "pending delete", "pending renew",
    "pending restore", "pending transfer", "pending update", "redemption period",
    "renew period", "server delete prohibited", "server hold", "server renew prohibited",
    "server transfer prohibited", "server update prohibited", "transfer period"}
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
LDH = re.compile(r"^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
REDACTION_METHODS = {"removal", "emptyValue", "partialValue", "replacementValue"}


class Checker:
    def __init__(self, lenient_abuse=False):
        self.problems = []
        self.lenient_abuse = lenient_abuse

    def need(self, condition, what):
        if not condition:
            self.problems.append(what)
        return condition

    def string(self, obj, key, where, required=True):
        if key not in obj:
            self.need(not required, "%s: no %s" % (where, key))
            return None
        self.need(isinstance(obj[key], str), "%s: %s is not a string" % (where, key))
        return obj[key] if isinstance(obj[key], str) else None

    def top(self, doc):
        conf = doc.get("rdapConformance")
        if self.need(isinstance(conf, list), "no rdapConformance array (RFC 9083 §4.1)"):
            missing = CONFORMANCE - set(conf)
            self.need(not missing, "rdapConformance lacks %s" % sorted(missing))

    def links(self, obj, where, need_self=True):
        links = obj.get("links", [])
        if not self.need(isinstance(links, list), "%s: links is not an array" % where):
            return []
        for link in links:
            self.need(isinstance(link, dict) and isinstance(link.get("href"), str) and
                      link["href"].startswith(("http://", "https://")),
                      "%s: a link without an absolute href (RFC 9083 §4.2)" % where)
        if need_self:
            self.need(any(link.get("rel") == "self" and
                          link.get("type") == "application/rdap+json" for link in links),
                      "%s: no self link of type application/rdap+json" % where)
        return links

    def events(self, obj, where, actions):
        events = obj.get("events", [])
        if not self.need(isinstance(events, list), "%s: events is not an array" % where):
            return {}
        found = {}
        for event in events:
            action, date = event.get("eventAction"), event.get("eventDate")
            self.need(isinstance(action, str) and isinstance(date, str) and RFC3339.match(date),
                      "%s: bad event %r (RFC 9083 §4.5)" % (where, event))
            found[action] = date
        for action in actions:
            self.need(action in found, "%s: no %r event" % (where, action))
        return found

    def vcard(self, entity, where):
        card = entity.get("vcardArray")
        if not self.need(isinstance(card, list) and len(card) == 2 and card[0] == "vcard" and
                         isinstance(card[1], list), "%s: vcardArray is not jCard (RFC 7095)"
                         % where):
            return {}
        props = {}
        for prop in card[1]:
            if not self.need(isinstance(prop, list) and len(prop) >= 4 and
                             isinstance(prop[0], str) and isinstance(prop[1], dict) and
                             isinstance(prop[2], str), "%s: bad jCard property %r"
                             % (where, prop)):
                continue
            props.setdefault(prop[0], []).append(prop)
        self.need(card[1] and card[1][0][:1] == ["version"] and card[1][0][3] == "4.0",
                  "%s: jCard does not start with version 4.0" % where)
        self.need("fn" in props, "%s: jCard has no fn" % where)
        return props

    def registrar(self, entity, where):
        ids = entity.get("publicIds", [])
        iana = [p.get("identifier") for p in ids if p.get("type") == "IANA Registrar ID"]
        self.need(len(iana) == 1 and str(iana[0]).isdigit(),
                  "%s: registrar without one IANA Registrar ID in publicIds (profile §2.4.1)"
                  % where)
        self.need(entity.get("handle") == (iana[0] if iana else None),
                  "%s: registrar handle is not its IANA ID" % where)
        self.vcard(entity, where)
        abuse = [e for e in entity.get("entities", []) if "abuse" in e.get("roles", [])]
        if not abuse:
            self.need(self.lenient_abuse, "%s: no abuse contact (profile §2.4.5)" % where)
            return
        props = self.vcard(abuse[0], where + " abuse")
        self.need(self.lenient_abuse or ("email" in props and "tel" in props),
                  "%s: abuse contact lacks email or tel (profile §2.4.5)" % where)

    def notices(self, doc, where):
        notices = doc.get("notices")
        if not self.need(isinstance(notices, list), "%s: no notices" % where):
            return
        titles = {}
        for notice in notices:
            self.need(isinstance(notice.get("description"), list) and
                      all(isinstance(d, str) for d in notice["description"]),
                      "%s: notice without a description array" % where)
            titles[notice.get("title")] = notice
        tos = titles.get("Terms of Use")
        if self.need(tos is not None, "%s: no Terms of Use notice (profile §2.11)" % where):
            self.need(any(l.get("rel") == "terms-of-service" for l in tos.get("links", [])),
                      "%s: Terms of Use notice without a terms-of-service link" % where)
        self.need("Status Codes" in titles, "%s: no Status Codes notice (profile §2.6.3)"
                  % where)
        wicf = titles.get("RDDS Inaccuracy Complaint Form")
        if self.need(wicf is not None, "%s: no inaccuracy complaint notice" % where):
            self.need(any(l.get("href") == "https://icann.org/wicf"
                          for l in wicf.get("links", [])), "%s: no wicf link" % where)

    def name(self, obj, where):
        ldh = self.string(obj, "ldhName", where)
        if ldh is None:
            return None
        self.need(LDH.match(ldh) is not None and len(ldh) <= 253,
                  "%s: ldhName %r is not LDH" % (where, ldh))
        if any(label.startswith("xn--") for label in ldh.split(".")):
            unicode = self.string(obj, "unicodeName", where)
            if unicode is not None:
                self.need(unicode.encode("idna").decode() == ldh if all(
                    ord(c) < 0x10000 for c in unicode) else True,
                    "%s: unicodeName %r does not match %r" % (where, unicode, ldh))
        return ldh

    def nameserver(self, ns, where, top_level):
        self.need(ns.get("objectClassName") == "nameserver", "%s: objectClassName" % where)
        self.name(ns, where)
        addresses = ns.get("ipAddresses", {})
        for family, version in (("v4", 4), ("v6", 6)):
            for text in addresses.get(family, []):
                try:
                    ok = ipaddress.ip_address(text).version == version
                except ValueError:
                    ok = False
                self.need(ok, "%s: %s address %r" % (where, family, text))
        self.links(ns, where)
        if top_level:
            self.events(ns, where, ["last update of RDAP database"])

    def redactions(self, doc, entities, where):
        contacts = [e for e in entities if set(e.get("roles", [])) & {
            "registrant", "administrative", "technical"}]
        redacted = doc.get("redacted", [])
        if contacts:
            self.need(isinstance(redacted, list) and redacted,
                      "%s: contacts without a redacted array (RFC 9537)" % where)
            self.need("redacted" in doc.get("rdapConformance", ["redacted"]),
                      "%s: redacted without its conformance value" % where)
        for entry in redacted:
            name = entry.get("name", {})
            self.need(isinstance(name.get("type", name.get("description")), str),
                      "%s: redaction without a name" % where)
            self.need(entry.get("method") in REDACTION_METHODS,
                      "%s: redaction method %r" % (where, entry.get("method")))
            self.need(entry.get("pathLang", "jsonpath") == "jsonpath",
                      "%s: pathLang" % where)
        for contact in contacts:
            props = self.vcard(contact, where + " contact")
            self.need(props.get("fn", [[None, None, None, ""]])[0][3] == "",
                      "%s: contact name not redacted" % where)
            self.need("email" not in props and "tel" not in props,
                      "%s: contact email or phone not redacted" % where)

    def domain(self, doc, where, top_level=True):
        self.need(doc.get("objectClassName") == "domain", "%s: objectClassName" % where)
        self.string(doc, "handle", where)
        ldh = self.name(doc, where)
        links = self.links(doc, where)
        if ldh is not None:
            self.need(any(l.get("rel") == "self" and l["href"].endswith("/domain/" + ldh)
                          for l in links), "%s: self link is not .../domain/%s" % (where, ldh))
        status = doc.get("status", [])
        self.need(isinstance(status, list) and status and set(status) <= RDAP_STATUSES,
                  "%s: status %r not RFC 8056 values" % (where, status))
        self.events(doc, where, ["registration", "expiration", "last changed",
                                 "last update of RDAP database"])
        entities = doc.get("entities", [])
        registrars = [e for e in entities if "registrar" in e.get("roles", [])]
        if self.need(len(registrars) == 1, "%s: not one registrar entity" % where):
            self.registrar(registrars[0], where + " registrar")
        for ns in doc.get("nameservers", []):
            self.nameserver(ns, where + " nameserver", top_level=False)
        dns = doc.get("secureDNS")
        if self.need(isinstance(dns, dict) and isinstance(dns.get("delegationSigned"), bool),
                     "%s: secureDNS.delegationSigned (profile §2.1)" % where):
            for ds in dns.get("dsData", []):
                self.need(isinstance(ds.get("keyTag"), int) and 0 <= ds["keyTag"] <= 65535 and
                          isinstance(ds.get("algorithm"), int) and
                          isinstance(ds.get("digestType"), int) and
                          re.match(r"^[0-9A-Fa-f]+$", str(ds.get("digest"))),
                          "%s: bad dsData %r" % (where, ds))
        self.redactions(doc, entities, where)

    def check(self, kind, doc, status):
        self.top(doc)
        if kind == "domain":
            self.domain(doc, "domain")
            self.notices(doc, "domain")
        elif kind == "nameserver":
            self.nameserver(doc, "nameserver", top_level=True)
            self.notices(doc, "nameserver")
        elif kind == "entity":
            self.need(doc.get("objectClassName") == "entity", "entity: objectClassName")
            self.string(doc, "handle", "entity")
            if "registrar" in doc.get("roles", []):
                self.registrar(doc, "entity")
            else:
                self.redactions(dict(doc, roles=None), [dict(doc, roles=["registrant"])],
                                "entity")
            self.links(doc, "entity")
            self.events(doc, "entity", ["last update of RDAP database"])
            self.notices(doc, "entity")
        elif kind == "help":
            self.need(isinstance(doc.get("notices"), list) and doc["notices"], "help: notices")
            self.notices(doc, "help")
        elif kind == "search":
            results = doc.get("domainSearchResults")
            if self.need(isinstance(results, list), "search: no domainSearchResults (§8)"):
                for i, result in enumerate(results):
                    self.need("rdapConformance" not in result,
                              "search: result %d repeats rdapConformance" % i)
                    self.domain(dict(result, rdapConformance=doc.get("rdapConformance")),
                                "search result %d" % i, top_level=False)
            self.notices(doc, "search")
        elif kind == "error":
            self.need(doc.get("errorCode") == status,
                      "error: errorCode %r, HTTP status %r" % (doc.get("errorCode"), status))
            self.string(doc, "title", "error")
            self.need(isinstance(doc.get("description"), list) and
                      all(isinstance(d, str) for d in doc["description"]),
                      "error: description is not an array of strings (RFC 9083 §6)")
        else:
            self.problems.append("unknown kind " + kind)


def cmd_check(args):
    data = open(args.file, "rb").read() if args.file else sys.stdin.buffer.read()
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        print("not JSON in UTF-8: %s" % error)
        return 1
    if not isinstance(doc, dict):
        print("not a JSON object")
        return 1
    checker = Checker(lenient_abuse=args.lenient_abuse)
    checker.check(args.kind, doc, args.status)
    for problem in checker.problems:
        print(problem)
    return 1 if checker.problems else 0


def whois_facts(host, port, domain):
    with socket.create_connection((host, port), timeout=10) as conn:
        conn.sendall(("domain %s\r\n" % domain).encode())
        data = b""
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
    facts = {"status": [], "ns": [], "ds": []}
    for line in data.decode("utf-8").split("\r\n"):
        key, _, value = line.strip().partition(": ")
        if key == "Registry Domain ID":
            facts["handle"] = value
        elif key == "Registrar":
            facts["registrar"] = value
        elif key == "Registrar IANA ID":
            facts["iana"] = value
        elif key == "Creation Date":
            facts["registration"] = value
        elif key == "Registry Expiry Date":
            facts["expiration"] = value
        elif key == "Updated Date":
            facts["last changed"] = value
        elif key == "Domain Status":
            facts["status"].append(value.split(" ")[0])
        elif key == "Name Server":
            facts["ns"].append(value.lower())
        elif key == "DNSSEC DS Data":
            facts["ds"].append(value.upper())
    return facts


def rdap_facts(base, domain):
    with urllib.request.urlopen(base + "domain/" + domain, timeout=10) as response:
        doc = json.loads(response.read().decode("utf-8"))
    events = {e["eventAction"]: e["eventDate"] for e in doc.get("events", [])}
    registrar = [e for e in doc["entities"] if "registrar" in e["roles"]][0]
    fn = [p[3] for p in registrar["vcardArray"][1] if p[0] == "fn"][0]
    # RFC 8056 backwards: "client hold" -> "clientHold", "active" -> "ok".
    def epp(status):
        if status == "active":
            return "ok"
        words = status.split(" ")
        return words[0] + "".join(w.capitalize() for w in words[1:])
    return {
        "handle": doc["handle"], "registrar": fn, "iana": registrar["handle"],
        "registration": events.get("registration"), "expiration": events.get("expiration"),
        "last changed": events.get("last changed"),
        "status": [epp(s) for s in doc["status"]],
        "ns": [ns["ldhName"] for ns in doc.get("nameservers", [])],
        "ds": ["%d %d %d %s" % (d["keyTag"], d["algorithm"], d["digestType"], d["digest"].upper())
               for d in doc.get("secureDNS", {}).get("dsData", [])],
    }


def cmd_diff(args):
    host, _, port = args.whois.rpartition(":")
    base = args.rdap if args.rdap.endswith("/") else args.rdap + "/"
    domains = list(args.domains)
    if args.db:
        with open(args.db, encoding="utf-8") as db:
            names = [line.split("\t")[1] for line in db if line.startswith("domain\t")]
        step = max(1, len(names) // max(1, args.sample))
        domains += names[::step][:args.sample]
    differences = 0
    for domain in domains:
        w, r = whois_facts(host, int(port), domain), rdap_facts(base, domain)
        for key in sorted(set(w) | set(r)):
            if w.get(key) != r.get(key):
                print("%s: %s: whois %r, rdap %r" % (domain, key, w.get(key), r.get(key)))
                differences += 1
    print("diff: %d domains, %d differences" % (len(domains), differences))
    return 1 if differences or not domains else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check")
    check.add_argument("kind")
    check.add_argument("file", nargs="?")
    check.add_argument("--status", type=int, default=200)
    check.add_argument("--lenient-abuse", action="store_true",
                       help="accept a registrar without abuse email/phone (the data lacks it)")
    diff = sub.add_parser("diff")
    diff.add_argument("--whois", required=True)
    diff.add_argument("--rdap", required=True)
    diff.add_argument("--db")
    diff.add_argument("--sample", type=int, default=100)
    diff.add_argument("domains", nargs="*")
    args = parser.parse_args()
    return cmd_check(args) if args.command == "check" else cmd_diff(args)


if __name__ == "__main__":
    sys.exit(main())
