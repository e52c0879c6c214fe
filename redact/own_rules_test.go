package redact

import (
	"encoding/base64"
	"testing"
)

// Each of diagrelay's own rules, on a case upstream's rules miss.
func TestOwnRules(t *testing.T) {
	rng := newRand(30)
	p := func(a string, n int) string { return pick(rng, a, n) }
	pw := p(alnum, 18) + "9z"
	tok := p(urlB64, 38) + "Q1"
	basic := base64.StdEncoding.EncodeToString([]byte("deploy:" + p(alnum, 16))) // user:password
	cases := map[string]struct {
		text    string
		secrets []string
	}{
		"url-credentials":           {"db: dial postgres://app:" + pw + "@db:5432/x refused", []string{pw}},
		"authorization-header":      {"> Authorization: Basic " + basic, []string{basic}},
		"bearer-token":              {"retrying with bearer " + tok, []string{tok}},
		"discord-webhook-url":       {"POST https://discord.com/api/webhooks/" + p(digits, 18) + "/" + tok + tok + " 401", []string{tok}},
		"dockerhub-pat":             {"login with dckr_pat_" + tok[:27] + " denied", []string{tok[:27]}},
		"groq-api-key":              {"groq: gsk_" + p(alnum, 50) + "A1 invalid", nil},
		"gcp-oauth-client-secret":   {"oauth: client secret GOCSPX-" + tok[:28] + " revoked", []string{tok[:28]}},
		"azure-storage-account-key": {"AccountKey=+" + p(b64, 85) + "==;EndpointSuffix=x", nil},
		"openai-project-key":        {"key sk-proj-" + p(urlB64, 40) + "T3BlbkFJ" + p(urlB64, 40) + "- denied", nil},
		"aws-secret-access-key":     {"AWS_SECRET_ACCESS_KEY=+" + p(b64, 30) + "aboutmac9", nil},
	}
	upstream := compile(gitleaksRules, gitleaksGlobal, nil)
	for _, r := range ownRules {
		c, ok := cases[r.ID]
		if !ok {
			t.Errorf("own rule %s has no test case", r.ID)
			continue
		}
		mustRedact(t, c.text, r.ID, c.secrets...)
		// The case is one upstream misses: else the rule is not needed.
		if _, counts := upstream.redact(c.text); counts != nil {
			t.Errorf("own rule %s: upstream's rules already catch %q: %v", r.ID, c.text, counts)
		}
	}
}
