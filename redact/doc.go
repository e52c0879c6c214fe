// Package redact replaces secrets in a diagnostic's text with a marker,
// "[REDACTED:<rule-id>]", before the text reaches the parent (docs/redaction.md).
// Text redacts; Clean, Message and Source sanitize, redact, then cut.
// The reference, with the measured quality and cost, is docs/redaction.md.
//
// # Rules
//
// The rules are gitleaks' config/gitleaks.toml at v8.30.1 (MIT; the
// license is LICENSE.gitleaks), generated into gitleaks_rules.go by
// `go generate` (internal/gitleaksgen reads the file from the module cache;
// the module is not imported), then diagrelay's own rules for what
// upstream misses in a diagnostic (own_rules.go: URL userinfo passwords,
// Authorization headers, bearer tokens, Discord webhooks, Docker Hub,
// Groq and Google OAuth client secrets). Each field means what it means
// upstream:
//
//   - Keywords: a rule runs only on a text in which one of its keywords
//     occurs, case folded; a rule without keywords always runs. One pass
//     over the text finds every keyword (an Aho-Corasick automaton of this
//     package's own: see keywords.go for why). Where a rule runs, its regex
//     runs over the whole text, as upstream runs it over the whole
//     fragment: no window around the keyword, so no match is lost to a
//     window's edge (a diagnostic is at most 64 KiB in the service).
//     Before that, an anchor (anchor.go) may show that the regex cannot
//     match: for a rule whose regex's shape proves that every match holds a
//     keyword at a known offset, a bounded start of the regex, run as a DFA
//     that takes every assertion to hold, must match at some keyword
//     occurrence, with the \b the regex puts around that part checked on
//     the text. Before all of it, the run prefilter (runs.go) skips every
//     rule whose match needs a longer run of secret characters (letters,
//     digits, _ . = + / ~ -) than the text has, or a literal the text lacks
//     (need.go; checked again for a rule a keyword would run): on prose,
//     the keyword scan does not run. Anchors and the prefilter only skip
//     work; they never change a result.
//   - The secret is the rule's secret group, or the first non-empty group,
//     or the whole match if the regex has none.
//   - Entropy: a finding whose secret's Shannon entropy (upstream's
//     formula) is not above the rule's threshold is not a secret.
//   - Allowlists, the global one then the rule's: a finding is allowed
//     when one of the regexes matches the secret (or the match or the
//     line, as the list's regexTarget says; a sanitized diagnostic is one
//     line, the whole text) or the secret, lowercased, contains one of the
//     stopwords; with condition AND every kind present must hold.
//
// # Decisions (docs/redaction.md, where upstream is silent or wrong for a diagnostic)
//
//   - The whole match becomes the marker, not only the secret group, so
//     that a webhook URL does not survive around its group; except the
//     delimiter characters the regex consumed at either end (space, quotes,
//     brackets, ; , and at the start = : \, at the end a literal \n or \r),
//     which stay. The trimming never enters the secret group.
//   - A secret followed by , . ) ] } or > is matched as if followed by a
//     space: the regexes read the text with each run of those characters
//     that ends the text or stands before whitespace read as spaces
//     (upstream's trailing class would leak "sk_live_…,"). The characters
//     themselves stay in the output.
//   - Boundaries (boundary.go): a token's fixed prefix also matches after
//     a letter, digit or _ ("KEY_AKIA…"), and any of | : & , and brackets
//     also ends a token; a finding only that wider end made is dropped
//     when its secret reads as a name in code ("testP256PrivateKey,").
//   - Overlapping matches (of different rules) are resolved to the longest,
//     then the more specific rule (one whose id does not contain "generic",
//     upstream's notion), then the earlier rule in the table. This replaces
//     upstream's own dedupe of generic findings.
//   - Rules that only apply to file paths are left out, and so are rules
//     that apply only within files whose path matches (a diagnostic has no
//     path): gitleaksLeftOut lists them. Allowlist paths and commits never
//     hold for a diagnostic: an OR list loses them, an AND list that has
//     them can allow nothing and is dropped.
//   - The global allowlist's `(?i)^true|false|null$` is anchored as
//     `(?i)^(?:true|false|null)$` (upstream anchors only two of its words,
//     so any secret starting with "true" or ending with "null" was allowed).
//   - Decoding (decode.go): base64, base64url, hex, %XX and \uXXXX spans
//     are decoded to depth 2; when the decoded text holds a finding, the
//     whole encoded span becomes the marker.
//   - A regex that starts with (?i)[\w.-]{0,50}? (generic-api-key and 93
//     others) is run as its rest, anchored, where a match of the rest can
//     start, then walked left over word characters (split.go): the same
//     matches as the regex, without the NFA's 50 threads a byte.
//   - The folded view (fold.go): the rules also run on the text with, in
//     each run of secret characters, marks dropped, fullwidth ASCII made
//     ASCII and Latin-lookalike Cyrillic and Greek letters made Latin; a
//     finding there redacts the original span.
//   - The "gitleaks:allow" comment is not honored: in a diagnostic it would
//     let any child opt its text out.
//   - The secret group is read from the match's own submatches; upstream
//     matches the regex again on the match alone. They differ only where
//     an assertion (\b, $) reads past the match's ends.
//   - The keyword scan reads U+212A KELVIN SIGN as k, U+0130 as i and
//     U+017F as s, as strings.ToLower or (?i) do, so that it finds every
//     keyword upstream's lowercased scan finds; it may also run a rule on
//     "ſecret", which upstream would not.
//   - Redact, then cut: Clean sanitizes without a limit, redacts, and cuts
//     with the sanitizer's cut, so no prefix of a secret that straddles the
//     limit survives. A count includes matches in the part the cut drops.
//   - Replacement repeats until nothing matches: a match dropped for
//     overlapping a longer one may leave a match of its own beside that
//     one's marker. Markers hold nothing a rule matches, so Text is
//     idempotent.
//
// The tables are built on first use, not at program start, and only what
// every text needs: the keyword automaton, each rule's least run, required
// literals and anchor shape, read from a generated table
// (analysis_table.go: no regex is parsed; 0.66 ms of CPU and 1.2 MB
// allocated on the 2-core box, 0.7 MiB kept after a first report). A
// rule's regex, allowlists and anchor DFA are compiled when the rule first
// runs, and an allowlist's alternatives when first tried (allow.go): most
// rules never run on a given stream, and compiling all of them cost 76 ms
// and 36 MB (docs/redaction.md, "Speed").
package redact

//go:generate go run ./internal/gitleaksgen
//go:generate go test -run ^TestAnalysisTable$ -update
