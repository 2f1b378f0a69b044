package sampling

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// NetPolicy says which network addresses inference endpoints may have: an
// ordered list of allow and deny rules over networks, the first match
// deciding; an address no rule matches is allowed. It is enforced when a
// connection is made (net.Dialer's Control sees the resolved address), so a
// host name that resolves to a denied address is refused however it
// resolves, DNS rebinding included.
type NetPolicy struct {
	Rules []NetRule
}

// NetRule is one line of a policy.
type NetRule struct {
	Allow  bool
	Prefix netip.Prefix
	Text   string // the line as written, without its comment
}

// DefaultNetPolicyText denies the link-local networks, where the cloud
// metadata services answer (169.254.169.254 on AWS, GCP, Azure and others;
// fd00:ec2::254 on AWS over IPv6; 100.100.100.200 on Alibaba Cloud), and
// allows everything else, loopback included (a vLLM on the same machine is
// the common case).
const DefaultNetPolicyText = `# Addresses inference endpoints may have (Test connection and sampling).
# One rule per line: allow or deny, then a network (CIDR) or an address.
# The first rule that matches decides; an address no rule matches is allowed.
deny 169.254.0.0/16      # IPv4 link-local: cloud metadata (169.254.169.254)
deny fe80::/10           # IPv6 link-local
deny fd00:ec2::254/128   # AWS metadata over IPv6
deny 100.100.100.200/32  # Alibaba Cloud metadata
`

// ParseNetPolicy reads a policy: one rule per line, "allow" or "deny" then
// a CIDR network or a single address; "#" starts a comment; blank lines are
// ignored. An error names the line. At most 1000 rules.
func ParseNetPolicy(text string) (NetPolicy, error) {
	var p NetPolicy
	for i, line := range strings.Split(text, "\n") {
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 || (f[0] != "allow" && f[0] != "deny") {
			return p, fmt.Errorf("line %d: %q: want \"allow NETWORK\" or \"deny NETWORK\"", i+1, strings.TrimSpace(line))
		}
		pre, err := netip.ParsePrefix(f[1])
		if err != nil {
			a, aerr := netip.ParseAddr(f[1])
			if aerr != nil {
				return p, fmt.Errorf("line %d: %q is neither a network (10.0.0.0/8, fd00::/8) nor an address", i+1, f[1])
			}
			pre = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		if pre.Addr().Is4In6() {
			pre = netip.PrefixFrom(pre.Addr().Unmap(), max(pre.Bits()-96, 0))
		}
		p.Rules = append(p.Rules, NetRule{Allow: f[0] == "allow", Prefix: pre.Masked(), Text: f[0] + " " + f[1]})
		if len(p.Rules) > 1000 {
			return p, fmt.Errorf("line %d: more than 1000 rules", i+1)
		}
	}
	return p, nil
}

// DefaultNetPolicy is DefaultNetPolicyText parsed.
func DefaultNetPolicy() NetPolicy {
	p, err := ParseNetPolicy(DefaultNetPolicyText)
	if err != nil {
		panic(err)
	}
	return p
}

// Check returns nil if addr may be connected to, and a *BlockedError naming
// the rule otherwise. An address is denied when it, or any address it stands
// for (Aliases: the local host for an unspecified address, the IPv4 address
// an IPv6 form carries), is denied: a rule for 127.0.0.0/8 also refuses
// 0.0.0.0, ::ffff:127.0.0.1 and 64:ff9b::7f00:1.
func (p NetPolicy) Check(addr netip.Addr) error {
	for _, a := range Aliases(addr) {
		if err := p.check1(a); err != nil {
			return err
		}
	}
	return nil
}

func (p NetPolicy) check1(addr netip.Addr) error {
	for _, r := range p.Rules {
		if r.Prefix.Contains(addr) {
			if r.Allow {
				return nil
			}
			return &BlockedError{Addr: addr, Rule: r.Text}
		}
	}
	return nil
}

var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")   // RFC 6052 well-known prefix
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48") // RFC 8215 local-use prefix
	sixToFour  = netip.MustParsePrefix("2002::/16")      // RFC 3056
	teredo     = netip.MustParsePrefix("2001::/32")      // RFC 4380
	v4compat   = netip.MustParsePrefix("::/96")          // RFC 4291 §2.5.5.1 (deprecated, still routed by some stacks)
)

// Aliases is addr (IPv4-mapped IPv6 as IPv4, zone dropped) followed by the
// addresses a connection to it may reach: for an unspecified address
// (0.0.0.0, ::) the local host, 127.0.0.1 and ::1 (Linux connects there); for
// an IPv6 address that carries an IPv4 one, that IPv4 address
// (IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4
// 2002::/16, and Teredo's server and client addresses), itself expanded the
// same way.
func Aliases(addr netip.Addr) []netip.Addr {
	addr = addr.Unmap().WithZone("")
	out := []netip.Addr{addr}
	add := func(a netip.Addr) {
		a = a.Unmap()
		for _, x := range out {
			if x == a {
				return
			}
		}
		out = append(out, a)
	}
	if addr.Is6() {
		b := addr.As16()
		v4 := func(i, j, k, l int) netip.Addr { return netip.AddrFrom4([4]byte{b[i], b[j], b[k], b[l]}) }
		switch {
		case nat64.Contains(addr), v4compat.Contains(addr) && !addr.IsUnspecified() && !addr.IsLoopback():
			add(v4(12, 13, 14, 15))
		case nat64Local.Contains(addr):
			add(v4(6, 7, 9, 10)) // RFC 6052 §2.2 for a /48: bits 64–71 are the u octet
		case sixToFour.Contains(addr):
			add(v4(2, 3, 4, 5))
		case teredo.Contains(addr):
			add(v4(4, 5, 6, 7))
			add(netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}))
		}
	}
	for i := 0; i < len(out); i++ {
		if out[i].IsUnspecified() {
			add(netip.MustParseAddr("127.0.0.1"))
			add(netip.IPv6Loopback())
		}
	}
	return out
}

// BlockedError is a connection the endpoint network policy refused.
type BlockedError struct {
	Addr netip.Addr
	Rule string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("connecting to %s is not allowed by the endpoint network policy (rule %q; admins change it on Users → Endpoint networks)",
		e.Addr, e.Rule)
}

// netPolicy is the process's policy; every Client's connections obey it.
var netPolicy atomic.Pointer[NetPolicy]

func init() {
	p := DefaultNetPolicy()
	netPolicy.Store(&p)
}

// SetNetPolicy makes p the policy of every connection made from now on by
// any Client of this process (the web server and workers load the admin's
// policy from the database and keep it current).
func SetNetPolicy(p NetPolicy) { netPolicy.Store(&p) }

// CurrentNetPolicy is the policy in force.
func CurrentNetPolicy() NetPolicy { return *netPolicy.Load() }

// dialControl refuses, before connecting, an address the policy denies.
func dialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("endpoint network policy: address %q: %w", address, err)
	}
	return netPolicy.Load().Check(ap.Addr())
}

// errRedirect refuses every redirect: following one would send the request
// (and the API key) to an address the user never entered.
var errRedirect = errors.New("redirect")

// guardedHTTPClient is the HTTP client of a Client built without one: no
// proxy from the environment (the policy must see the endpoint's own
// address), connections checked against the policy, no redirects, and
// maxIdle idle connections kept per host.
func guardedHTTPClient(maxIdle int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: dialControl}
	t.DialContext = d.DialContext
	t.MaxIdleConnsPerHost = maxIdle
	t.MaxIdleConns = max(t.MaxIdleConns, maxIdle)
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return errRedirect }}
}
