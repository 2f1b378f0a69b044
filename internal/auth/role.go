package auth

// Role is a user's standing in one project. The zero value is no access.
type Role int

// Roles, from least to most: each can do everything the ones below it can.
const (
	NoRole Role = iota
	Viewer      // reads comparisons, reports and problems
	Editor      // creates comparisons, uploads, re-verifies, reviews, overrides verdicts
	Owner       // manages members, share links, deletes comparisons
)

// ParseRole reads "viewer", "editor" or "owner"; anything else is NoRole.
func ParseRole(s string) Role {
	switch s {
	case "viewer":
		return Viewer
	case "editor":
		return Editor
	case "owner":
		return Owner
	}
	return NoRole
}

func (r Role) String() string {
	switch r {
	case Viewer:
		return "viewer"
	case Editor:
		return "editor"
	case Owner:
		return "owner"
	}
	return ""
}

// Perm is something a request wants to do to a project's comparisons.
type Perm int

// Permissions, each needing the role named in its comment (admins have all).
const (
	Read   Perm = iota + 1 // Viewer
	Edit                   // Editor
	Manage                 // Owner
)

// Allows reports whether role r grants p.
func (r Role) Allows(p Perm) bool {
	switch p {
	case Read:
		return r >= Viewer
	case Edit:
		return r >= Editor
	case Manage:
		return r >= Owner
	}
	return false
}
