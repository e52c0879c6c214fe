package redact

import (
	"encoding/base64"
	"math/rand/v2"
)

// secretFormat is one of the seven secret formats the boundary, encoding and
// folding tests try: its rule, and a fresh secret of it as a diagnostic
// would hold it (the whole of which becomes the marker).
type secretFormat struct {
	name, rule, secret string
}

// sevenFormats makes one secret of each secretFormat from rng.
func sevenFormats(rng *rand.Rand) []secretFormat {
	b32 := upper + "234567"
	payload := `{"sub":"` + pick(rng, alnum, 12) + `","iat":1700000000}`
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." +
		base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + pick(rng, urlB64, 43)
	pem := "-----BEGIN RSA PRIVATE KEY----- " + pick(rng, b64, 64) + " " + pick(rng, b64, 40) +
		" -----END RSA PRIVATE KEY-----"
	return []secretFormat{
		{"GitHub PAT", "github-pat", "ghp_" + pick(rng, alnum, 36)},
		{"AWS key id", "aws-access-token", "AKIA" + pick(rng, b32, 16)},
		{"Slack", "slack-bot-token", "xoxb-" + pick(rng, digits, 12) + "-" + pick(rng, digits, 13) + "-" + pick(rng, alnum, 24)},
		{"Stripe", "stripe-access-token", "sk_live_" + pick(rng, alnum, 24)},
		{"PEM", "private-key", pem},
		{"JWT", "jwt", jwt},
		{"generic", "generic-api-key", "api_key=" + pick(rng, alnum, 32)},
	}
}
