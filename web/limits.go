package web

// Size limits of what people type into forms and API fields (item 11 of
// issue 10): every text field has one, and a longer value is refused with
// an error naming the field and the limit. Lengths are in bytes of UTF-8.
const (
	maxEmail    = 254  // RFC 5321's longest address
	maxPassword = 1024 // auth.CheckPasswordPolicy's limit for new passwords
)
