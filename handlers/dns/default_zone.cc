#include "handlers/dns/default_zone.h"

namespace onepass::dns {

absl::string_view DefaultZoneText() {
  // It exercises every kind of answer: apex data, in-zone and out-of-zone CNAMEs, a CNAME
  // chain and loop, wildcards (with an empty non-terminal below one), a wildcard CNAME, a
  // delegation with glue and a DS, and MX/SRV targets for additional-section processing.
  static constexpr char kText[] = R"zone(
; The embedded default zone of onepassd --handler dns (handlers/dns/default_zone.cc).
$ORIGIN example.com.
$TTL 3600
@        IN SOA  ns1.example.com. hostmaster.example.com. 2026112901 7200 3600 1209600 300
@        IN NS   ns1.example.com.
@        IN NS   ns2.example.com.
@        IN A    192.0.2.1
@        IN AAAA 2001:db8::1
@        IN MX   10 mail.example.com.
@        IN MX   20 mx.example.net.
@        IN TXT  "v=spf1 -all"
ns1      IN A    192.0.2.53
ns1      IN AAAA 2001:db8::53
ns2      IN A    198.51.100.53
ns2      IN AAAA 2001:db8:1::53
www      IN A    192.0.2.80
www      IN AAAA 2001:db8::80
www      IN TXT  "hello" "world"
mail     IN A    192.0.2.25
ftp      IN CNAME www.example.com.
alias    IN CNAME ftp.example.com.
ext      IN CNAME www.example.net.
loop1    IN CNAME loop2.example.com.
loop2    IN CNAME loop1.example.com.
_sip._tcp IN SRV 0 5 5060 www.example.com.
*.wild   IN A    192.0.2.100
*.wild   IN TXT  "synthesised"
*.wild   IN MX   10 mail.example.com.
host.ent.wild IN A 192.0.2.101
*.cwild  IN CNAME www.example.com.
a.b.c    IN A    192.0.2.102
sub      IN NS   ns.sub.example.com.
sub      IN NS   ns.example.net.
sub      IN DS   12345 13 2 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF
ns.sub   IN A    192.0.2.201
ns.sub   IN AAAA 2001:db8::201
tosub    IN CNAME host.sub.example.com.
tonx     IN CNAME nothere.example.com.
towild   IN CNAME foo.wild.example.com.
)zone";
  // Drop the newline after the opening delimiter so the text equals the committed file.
  return absl::string_view(kText + 1, sizeof(kText) - 2);
}

}  // namespace onepass::dns
