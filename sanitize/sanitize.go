package sanitize

// The limits of Message and Source, in UTF-16 code units.
const (
	MessageLimit = 1000
	SourceLimit  = 80
)

// Message returns s cleaned for use as a diagnostic message:
// Clean(s, MessageLimit).
func Message(s string) string { return Clean(s, MessageLimit) }

// Source returns s cleaned for use as a diagnostic's source name:
// Clean(s, SourceLimit).
func Source(s string) string { return Clean(s, SourceLimit) }

// Clean returns s made safe to paint in a terminal and to put in a model's
// context, at most limit UTF-16 code units long; limit <= 0 means no limit.
// The rules are in the package documentation. Clean is idempotent:
// Clean(Clean(s, n), n) == Clean(s, n). If s is already clean and short
// enough, Clean returns s itself without allocating.
func Clean(s string, limit int) string {
	c := cleaner[string]{limit: limit, pool: true}
	c.feed(s, true)
	c.finish()
	x := c.result()
	if c.mat {
		releaseBuf(c.out) // result copied it
	}
	return x
}
