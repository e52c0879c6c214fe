package redact

// ownRules are diagrelay's rules for what upstream's table misses in a
// diagnostic; each has a test case in own_rules_test.go. Their ids must not
// be upstream's (TestRuleIDsUnique).
var ownRules = []ruleSpec{
	{
		// A password in a URL's userinfo: postgres://app:pw@db/x,
		// redis://:pw@host, amqp://u:pw@mq. Upstream has this only for
		// sidekiq's hosts.
		ID:       "url-credentials",
		Regex:    `(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s/?#@:'"<>]{0,128}:([^\s/?#@'"<>]{3,256})@`,
		Keywords: []string{"://"},
		Allow: []allowSpec{{Regexes: []string{
			`^(?:\*+|x+|\.+|\$\{?[A-Za-z_]\w*\}?|%[A-Za-z_]\w*%|\{\{[^}]*\}\})$`,
		}}},
		NotSecret: placeholderPassword,
	},
	{
		// An HTTP Authorization header's credentials, as an HTTP client's
		// debug output prints them; upstream has it only inside curl
		// commands.
		ID:       "authorization-header",
		Regex:    `(?i)\b(?:proxy-)?authorization["']?\s{0,3}[:=]\s{0,3}["']?(?:basic|bearer|token|digest|negotiate)\s{1,3}([A-Za-z0-9._~+/-]{8,}=*)`,
		Keywords: []string{"authorization"},
		Allow: []allowSpec{{Regexes: []string{
			`(?i)^(?:\*+|x+|redacted|<[^>]*>)$`,
		}}},
		NotSecret: notBasicCredentials,
	},
	{
		// A bearer token on its own: "Bearer eyJ…", "bearer 2f1c…".
		ID:       "bearer-token",
		Regex:    `\b[Bb]earer\s{1,3}([A-Za-z0-9._~+/-]{20,}=*)`,
		Entropy:  3,
		Keywords: []string{"bearer"},
	},
	{
		// A Discord webhook URL: its path is the credential.
		ID:       "discord-webhook-url",
		Regex:    `https?://(?:(?:canary|ptb)\.)?discord(?:app)?\.com/api/(?:v\d{1,2}/)?webhooks/\d{17,20}/[\w-]{60,72}`,
		Keywords: []string{"discord"},
	},
	{
		// A Docker Hub personal or organization access token.
		ID:       "dockerhub-pat",
		Regex:    `\bdckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}`,
		Keywords: []string{"dckr_"},
	},
	{
		// A Groq API key.
		ID:       "groq-api-key",
		Regex:    `\bgsk_[A-Za-z0-9]{52}\b`,
		Entropy:  3,
		Keywords: []string{"gsk_"},
	},
	{
		// A Google OAuth client secret.
		ID:       "gcp-oauth-client-secret",
		Regex:    `\bGOCSPX-[A-Za-z0-9_-]{28}`,
		Entropy:  3,
		Keywords: []string{"gocspx-"},
	},
	{
		// An Azure storage account key, as a connection string carries it:
		// upstream's generic rule wants it to start with a letter or digit,
		// and a quarter of them start with + or /.
		ID:       "azure-storage-account-key",
		Regex:    `(?i)\bAccountKey\s{0,3}=\s{0,3}([A-Za-z0-9+/]{86}==)`,
		Keywords: []string{"accountkey"},
	},
	{
		// An OpenAI project, service-account or admin key: upstream's rule
		// ends with \b, which fails after a key that ends in "-".
		ID:       "openai-project-key",
		Regex:    `\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}`,
		Entropy:  3,
		Keywords: []string{"t3blbkfj"},
	},
	{
		// An AWS secret access key after its name: upstream leaves it to
		// its generic rule, which misses a key that starts with + or /, or
		// that holds one of its stopwords (about 1 in 30 random keys).
		ID:       "aws-secret-access-key",
		Regex:    `(?i)\b(?:aws_?)?secret_?access_?key["']?\s{0,3}[:=]\s{0,3}["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`,
		Entropy:  3,
		Keywords: []string{"secret_access_key", "secretaccesskey"},
	},
}
