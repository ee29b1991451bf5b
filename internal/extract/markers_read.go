package extract

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file reads one user turn into items (decisions, rejections,
// constraints, plans) for the built-in extractor. Every pattern is matched
// on lower-cased text; the recorded text keeps the user's own words.

var (
	// turnHold: the user says nothing is settled yet; the whole turn is skipped.
	turnHold = mustPattern(`\b(?:(?:don'?t|do not|not)\s+(?:decide|pick|choose|commit)\b[^.!?\n]*\byet|(?:haven'?t|have not|not|nothing(?: is)?|no)\s+(?:been\s+)?decided|no decision yet|undecided|decision pending|pending decision|brainstorm|thinking out loud|hypothetically|let'?s not decide|decide (?:later|tomorrow|next)|before we (?:pick|choose|decide|commit)|until we (?:have|know|see)|need to decide|torn between|let me think)`)
	// hedge: a sentence that only considers, asks or reports.
	hedge = mustPattern(`\b(?:maybe|perhaps|might|possibly|probably|i think|i guess|not sure|wonder|whether|consider|considering|what if|could|would|someday|eventually|for this test|experiment\s+(?:with|on|around|a\s+bit|first)|(?:an|one|a quick|a small)\s+experiment|try|trying|let'?s see|we'?ll see|and see|let me|later|tomorrow|next week|revisit|temporar\w*|i'?d like|if we|if you|thoughts)\b`)
	// reported: someone else's words, meta requests about text, history.
	reported        = mustPattern(`\b(?:you (?:suggested|proposed|said|recommended)|the assistant|(?:he|she|they) said|colleague|the readme|the docs?|the ticket(?:\s|$|[.,;:])|the error(?:\s+(?:message|says|said|reads|mentions|shows|points|complains|was|is:)|:|$)|the linter(?:\s+(?:says|said|complains|complained|flags|flagged|reports|reported|wants|wanted|warns|warned|thinks|is complaining|is flagging|output)|:|$)|the customer|the old|used to|my (?:previous|old|last|former) (?:company|job|team|employer|gig)|last year|years ago|previous team|for context|never agreed|wrote|says|said|printed|summari[sz]e|summary|remind me|draft|(?:^|please |you |to )write (?:a|an|the)|translate|rename|explain|comparison|compare|give me|show me|options? for|candidates|pros|cons|test name|test case|called|print(?:\s+(?:the|a|an|out|it|them|this|that|me|all|every|each|our|my)\b|$)|respond with|paste|pasted|(?:the|this|that|my|its|your|some|linter|test|build|command|terminal|console)\s+output|output\s+(?:of|from|says|shows|was|looks|reads)|example)\b|^no\s+[\w\-]+(?:\s[\w\-]+)?\s+(?:was|were|has been|have been|got)\s|\b(?:it|this|that|which|message|line|text|sign|label|comment|note|title|header|banner|prompt)\s+reads\b`)
	negatedDecision = mustPattern(`\b(?:not|never|n't)\s+(?:decided|agreed|settled|saying)\b`)
	questionLead    = mustPattern(`^(?:should|could|would|can|does|did|is|are|was|were|will|what|which|why|how|where|when|who|shall|may|do (?:we|you|i|they))\b`)

	// pasteIntro: a line introducing pasted material; the lines after it, up
	// to a blank line, are not the user speaking.
	pasteIntro = mustPattern(`(?:printed|output|log|logs|says|said|wrote|reads|config|paste|error|here'?s|here is|shows|for (?:context|reference)(?: only)?)\b[^:]*:\s*$`)
	// outputLine: a line that looks like terminal or log output.
	outputLine = mustPattern(`^\s*(?:\$ |> |level=|\d{4}-\d\d-\d\d|\[(?:info|warn|warning|error|debug|trace)\]|(?:info|warn|warning|error|debug|trace)\s*[:|]|--- fail|fail:|panic:|at \S+\(|file ")`)
	fenced     = mustPattern("(?s)```.*?(?:```|$)|~~~.*?(?:~~~|$)")
	inlineCode = mustPattern("`[^`\n]*`")
	quoted     = mustPattern(`"[^"\n]*"|“[^”\n]*”|„[^“\n]*“`)

	// planLabel: a plan the user states in its own words ("Plan: first …,
	// then …", "Let's do it in three steps:" and a list).
	planLabel = mustPattern(`^(?:plan|let'?s do (?:it|this) in (?:\w+ )?steps|to-?dos?(?: (?:for|in) [\w ]{1,30})?|tasks (?:for|in) [\w ]{1,30}|next steps)\s*:\s*(.*)$`)
	thenSep   = mustPattern(`(?:,\s*|;\s*|\s+)(?:and\s+)?(?:then|after that|finally|and finally)\s+`)
	listItem  = mustPattern(`^\s*(?:\d{1,2}[.)]|\(?[a-z\d]\)|[-*•+])\s+(.+?)\s*$`)
	enumInner = mustPattern(`(?:^|\s)(?:\d{1,2}[.)]|\([a-z\d]\)|[a-h]\))\s+`)

	// Labels opening a statement, followed by ":" or a dash, or ending a line
	// that introduces a list.
	labelRe = mustPattern(`^((?:our |the |final |design |new |revised |architecture )?decision(?: is| changed)?|decided|i'?ve decided|we'?ve decided|final answer|final call|verdict|` +
		`change of (?:decision|plan|mind)|correction|scratch that|on second thought|on reflection|on second thoughts|thinking about it more|(?:i'?ve |i )?changed my mind(?: about [^:]{1,40})?|` +
		`(?:(?:house|hard|team|ground|project|coding|our|the|new|one more|another) )?(?:rules?|constraints?|requirements?|guidelines?|conventions?|polic(?:y|ies)|invariants?)|non-negotiables?|` +
		`rejected(?: alternatives?| options?)?|ruled out|vetoed|not doing|` +
		`plan (?:accepted|approved)|(?:accepted|approved|final|agreed) plan|the plan is|our plan is|here'?s the plan)\s*(?::|\s[-–—]+|(?:\s|$))\s*(.*)$`)

	interjection = mustPattern(`^(?:(?:actually|absolutely|definitely|scratch that|on second thoughts?|on reflection|thinking about it more|correction|ok|okay|alright|all right|thanks|thank you|hm+|ugh|meh|oh well|welp|btw|by the way|fwiw|for what it'?s worth|experiment over|verdict|oh and|oh,? also|and also|plus|p\.?s\.?|side note|quick note|anyway|anyways|oh|hey)\b[,.:;!—–\- ]*\s*|(?:no\s+)*(?:no|nope|nah|so|then|right|fine|good|great|yes|yeah|yep|yup|k|kk|well|also|wait|hold on)\s*[,.:;!—–-]+\s*|(?:nah|nope)\s+|(?:so|and so|and|then|please|just|also)\s+|(?:lgtm|looks good to me),?\s+(?:but|except)\s+|(?:nit(?:pick)?|blocking|issue|minor|major|must(?:-fix)?|praise|lgtm|question|q)(?:\s*\((?:non-)?blocking\))?\s*[:—–-]+\s*|(?:remember|important|note|nb|fyi|reminder|heads up|keep in mind|again|once again|as i said|like i said|as agreed|i told you(?: already)?|i said(?: already)?|one (?:more |small |last )?(?:thing|change|tweak)(?: though)?|just one thing)\s*[:,—–-]+\s*|(?:note|remember|keep in mind) that\s+)`)
	mindAbout    = mustPattern(`^(?:i'?ve |i have |i |we'?ve |we )?changed (?:my|our) minds? (?:about|on) ([^,;:—–]{1,40}?)\s*[,;:—–]+\s*(\S.*)$`)
	changeWords  = mustPattern(`^(?:actually|scratch that|on second thoughts?|on reflection|thinking about it more|no|nope|correction)\b`)
	anymore      = mustPattern(`\b(?:anymore|any more|instead|after all|no longer)\b`)
	decisive     = mustPattern(`(?:^|[,;:—–-]\s*|\s)(?:(?:that'?s|that is|this is|it'?s)\s+(?:final|the decision|decided|settled)|final)\s*[.!]*$`)

	decidedTo    = mustPattern(`^(we|i)(?:'ve| have)?\s+(?:decided|agreed|settled)(?:\s+(?:in|at|during|after)\s+(?:the\s+|our\s+|today'?s\s+|this\s+\w+'?s\s+)?(?:standup|stand-up|meeting|retro|review|sync|call|planning|the end))?\s+(?:(?:to|on)\s+|(?:that\s+)?we(?:'ll| will)?\s+)(.+)$`)
	settledLabel = mustPattern(`^(?:settled|agreed|we agreed|it'?s settled)\s*:\s*(.+)$`)
	keepVerb     = mustPattern(`^(?:let'?s|we'?ll|we will|we'?re going to|we are going to)\s+keep\s+(.+)$`)
	// personal: what someone decides for themselves, not for the project.
	personal    = mustPattern(`^(?:take a break|go home|call it a day|sleep on it|grab (?:lunch|coffee|a coffee)|step away|head out|log off|stop for (?:today|now|the day))\b`)
	decidedAgst = mustPattern(`^(?:(?:we|i)(?:'ve| have)?\s+)?(?:decided against|ruled out|rejected|are rejecting|reject|rejecting|veto|vetoed|vetoing|am vetoing)\s+(.+)$|^i'?m\s+vetoing\s+(.+)$`)
	goWith      = mustPattern(`^(?:(?:let'?s|we'?ll|we will|we'?re|we are|we'?re going to|we are going to|we'?ve|we have|we|i'?m|i am|i'?ve|i have)\s+)?(?:go|going|went|gone|move forward|moving forward)\s+with\s+(.+)$`)
	// imperChoice: "Build the admin tool as a Rails app", "Deploy to
	// Fly.io", "Pick Svelte": an imperative that names the option the work
	// is done with, read as the same words after "let's" are — unless it
	// is for a purpose of the moment ("… so I can show it"). Where
	// something is hosted, or a target ("Target 60 fps"), is a one-off or
	// a requirement as often.
	imperChoice = mustPattern(`^(write|build|implement|pick|choose|deploy|target|add)\s+(.+)$`)
	// needAgain: "actually we need Windows support after all": an option
	// wanted again, a change only (said plainly, "we need Redis running
	// for the tests" is a task).
	needAgain = mustPattern(`^(?:we|i)\s+(?:do\s+|really\s+|still\s+)?need\s+([^,;]+)$`)
	// yourProposal: what the assistant proposed, named as such.
	yourProposal = mustPattern(`^(?:(?:your|the)\s+(?:suggestion|recommendation|recommended one|proposal|idea|approach|pick|choice|option|plan)|what you (?:suggested|recommended|proposed|said))[.!]?$`)
	// goPart: a part of the product after "Go for" ("Go for the backend").
	goPart = mustPattern(`^(?:the|our|all|every)\s+(?:backend|back-end|frontend|server|servers|service|services|microservices|api|apis|cli|worker|workers|daemon|agent|gateway|proxy|tooling|scripts|core|engine|sdk|bot|runtime|infra|infrastructure|backends)\b`)
	// forList: "Go for the backend, Postgres for storage": options each
	// for its part, listed (groups 1 and 2).
	forList = mustPattern(`^(?:use\s+)?([\w.+#\-]+(?:\s[\w.+#\-]+)?\s+for\s+[^,;]{2,40}?),\s+(?:and\s+)?([\w.+#\-]+(?:\s[\w.+#\-]+)?\s+for\s+[^,;]{2,40})$`)
	// goFor: "let's go for Drizzle", "we'll opt for Vite": an option only
	// ("go for it", "go for a simpler approach" are read elsewhere or not).
	goFor      = mustPattern(`^(?:(?:let'?s|we'?ll|we will|we'?re|we are|we'?re going to|we are going to|we|i'?m|i am)\s+)?(?:go|going|opt|opting)\s+for\s+(.+)$`)
	stickWith  = mustPattern(`^(?:(?:let'?s|we'?ll|we will|we'?re going to|we are going to|we'?re|we are|we)\s+)?(?:stick with|sticking with|stay with|staying with|stay on|staying on|settle on|settling on|keep using|standardi[sz]e on|standardi[sz]ing on)\s+(.+)$`)
	revertForm = mustPattern(`^(?:reverting|revert|undo|undoing|reversing)\s+(?:the\s+|our\s+)?(.+?)\s+decision\b[\s,;:—–-]*(?:(?:go(?:ing)?\s+)?back to\s+(.+))?$`)
	itIs       = mustPattern(`^(.{1,40}?)\s+it is(?:\s+for\s+(?:the\s+)?[\w\-]+(?:\s[\w\-]+)?)?$`)
	willVerb   = mustPattern(`^(?:let'?s|we'?ll|we will|we should|we must|we need to|we have to|we'?re going to|we are going to|we'?re|we are|going forward,? we(?:'ll| will)?|from now on,? we(?:'ll| will)?|we)\s+(?:also\s+|just\s+)?(use|using|store|storing|ship|deploy|deploying|host|hosting|support|adopt|run|running|do|doing|write|writing|put|build|building|call|handle|implement|target|serve|making|add|talk|speak)\s+(.+)$`)
	// plainVerbs: willVerb's verbs that state a decision with any object;
	// the others ("we're running the migration", "let's write a test") only
	// with a named option ("let's write the worker in Python").
	plainVerbs = map[string]bool{"use": true, "store": true, "ship": true, "deploy": true, "host": true, "support": true, "adopt": true, "run": true}
	// verbBase reads willVerb's -ing forms, and "do", as the decision's verb.
	verbBase = map[string]string{"using": "use", "storing": "store", "deploying": "deploy", "hosting": "host", "running": "run",
		"doing": "use", "do": "use", "talk": "use", "speak": "use", "writing": "write", "building": "build", "making": "make"}
	doItIn = mustPattern(`^(?:it|this|that|them|everything|the rest)\s+(?:in|with)\s+`)
	// ruleVerbs: verbs whose bare imperative after "from now on" is a
	// rule of how the work is done.
	ruleVerbs = map[string]bool{"write": true, "run": true, "add": true, "keep": true, "put": true, "ask": true, "check": true,
		"commit": true, "document": true, "name": true, "format": true, "lint": true, "squash": true, "rebase": true, "open": true,
		"follow": true, "include": true, "wrap": true, "prefix": true, "tag": true, "sign": true, "review": true, "mention": true,
		"explain": true, "reply": true, "respond": true, "answer": true, "prefer": true, "avoid": true, "test": true, "update": true,
		"log": true, "return": true, "validate": true, "pin": true, "vendor": true, "target": true, "stick": true, "stay": true}
	fromNowOn     = mustPattern(`^(?:from now on|going forward|henceforth)[,:]?\s+(?:we\s+(?:will\s+|'ll\s+)?)?(.+)$`)
	trailingNowOn = mustPattern(`[, ]+(?:from now on|from here on|going forward|then|please|now|for now|after all|again)$`)
	useImper      = mustPattern(`^use\s+(.+)$`)
	// keepRule: "Keep the database code in internal/store", "keep each file
	// under 400 lines", "Keep secrets out of the repo": where things go and
	// how big they get, a lasting rule (not "keep going", "keep me posted").
	keepRule = mustPattern(`^(?:please\s+)?keep\s+(?:all\s+|every\s+|each\s+|the\s+|our\s+|any\s+)?(\S.*?)\s+(?:under|below|above|over|in|inside|within|out of|away from|next to|separate from|at most|to at most|at least|for\s+\d)\s*\S.*$`)
	// keepAs: "keep the public API backwards compatible", "keep the CLI
	// flags stable": a thing kept in a state, a lasting rule.
	keepAs = mustPattern(`^(?:please\s+)?(?:always\s+)?keep\s+(?:all\s+|every\s+|each\s+|the\s+|our\s+)?(?:[\w\-/.]+\s+){0,3}?[\w\-/.]+\s+(?:backwards?[- ]compatible|compatible|stable|unchanged|as it is|as they are|private|internal|idempotent|deterministic|in sync|sorted|alphabeti[sz]ed|pure|side-effect free|stateless)$`)
	// namingCase: "use snake_case for DB columns": a naming convention.
	namingCase = mustPattern(`^(?:always\s+)?use\s+(?:snake_case|snake case|camelcase|camel case|kebab-case|kebab case|pascalcase|pascal case|screaming_snake_case|lower ?case|upper ?case)(?:\s+(?:everywhere|throughout|for\s+(?:all\s+|the\s+|every\s+|our\s+)?(?:[\w\-]+\s+){0,2}?(?:names|columns|keys|fields|variables|identifiers|files|functions|methods|classes|tables|routes|endpoints|vars|props|constants|types|packages|modules|branches|tags|labels)))?$`)
	keepNot    = mustPattern(`^(?:me|us|him|her|them|it|this|that|going|trying|working|an eye|track|posted|in mind|up|at it|calm|quiet|looking|reading|digging|searching)\b`)
	keepPlace  = mustPattern(`^\S.*\s(?:in|under|inside|behind|out of)\s+(?:its|their|a|an|the)\s+(?:own|separate|single|dedicated)\b`)
	skipAny    = mustPattern(`^(?:please\s+)?(?:skip|no need for)\s+(?:any|all)\s+\S.+$`)
	// triedDrop: "We tried Redis for caching but drop it, no cache for now":
	// an option tried and dropped, the rest of the sentence its reason.
	triedDrop = mustPattern(`^(?:we|i)(?:'ve| have)?\s+(?:tried|experimented with|added|used|played with|set up|started with)\s+(.+?)\s+but\s+(?:let'?s\s+|we'?ll\s+|please\s+)?(?:drop|ditch|scrap|remove|rip out|get rid of|kill|revert|undo)\s+(?:it|that|them|this)\b[\s,;:—–-]*(.*)$`)
	// conditional: a drop that waits on something ("remove it before
	// merging") is a task, not a rejection.
	conditional = mustPattern(`^(?:before|after|when|once|until|unless|if|for the|in the)\b`)
	triedCut    = mustPattern(`\s+(?:for|in|on|last|earlier|yesterday|this morning|a while)\b`)
	// makeSpec: "Make the short codes 7 characters", "Make the IDs ULIDs": a
	// property of the product named (not "make the test pass").
	makeSpec = mustPattern(`^make\s+(?:the|all|every|each|our)\s+(.+)$`)
	makeTask = mustPattern(`\b(?:pass|passes|work|works|green|compile|compiles|build|faster|slower|better|happy|shorter|longer|cleaner|readable|nicer|go away|disappear)\b`)
	// backTo: "go back to SQLite", "back to Postgres": a change of decision.
	// whatWeHad: the earlier choice named by when it held, before the
	// choice itself ("back to what we had before, SQS").
	whatWeHad = mustPattern(`^(?:what we (?:had|used)(?: before| originally| at first)?|the old (?:one|setup|way)|how it was)[,:—–\s]+`)
	backTo    = mustPattern(`^(?:(?:let'?s|we'?ll|we will|we'?re|we are|we)\s+)?(?:(?:(?:go|going|switch|switching|move|moving)\s+)?back|revert(?:ing)?(?:\s+back)?|roll(?:ing)?\s+back)\s+to\s+(.+)$`)
	// judgement: "Postgres is overkill", "MySQL is more trouble than it is
	// worth": a reason for the statement beside it, never a choice. A
	// subject of up to 40 characters, then the verdict on it.
	judgement = mustSubjectPattern(`[\w.\-/+' ]`, 40, `(?:(?:needs?|requires?)\s+[a-z]+\s+[a-z]+|(?:is|are|was|were|seems|feels|looks)\s+(?:\w+\s+)?(?:overkill|too\b|readable by|exposed to|vulnerable to|hard to (?:review|read|audit|debug|test|maintain)|guessable|forgeable|insecure|unsafe|more trouble|not worth|a pain|unnecessary|overengineered|over-engineered|bloated|heavy|slow|flaky|noisy|enough|fine|simpler|easier|better|worse|brutal|expensive|out of control|through the roof|a nightmare|unmaintained|abandoned|archived|deprecated|end[- ]of[- ]life|unsupported|no longer maintained|painful|awful|terrible|unreliable|clunky|a mess|insane|ridiculous|absurd|crazy|outrageous|one more thing|another thing|yet another|unacceptable|the problem|the issue|the culprit|the bottleneck|the last straw)|(?:needs?|takes?|has|have|requires?|adds?|costs?)\s+(?:way\s+|far\s+)?too\b|(?:can'?t|cannot|won'?t|doesn'?t|does not)\s+(?:keep up|scale|cope|handle (?:it|the load))|(?:runs?|ran)\s+out\s+of\s+\w+|chokes?\s+on|(?:falls?|falling|fell)\s+(?:over|apart)|keeps?\s+(?:crashing|failing|breaking|timing out|[a-z]+ing\s+(?:us|me|with))|already\s+[a-z]+s\b|only\s+(?:run|have|need|use|serve|support|deploy|ship)\s|(?:was|were|is)\s+a\s+(?:mistake|bad idea|dead end)|(?:isn'?t|aren'?t|is not|are not)\s+worth|(?:has|have|had)\s+(?:terrible|awful|bad|poor|flaky|spotty|unreliable|patchy)\s+\w|(?:jumps|explodes|doubles|triples|balloons|skyrockets)\b|(?:didn'?t|did not|doesn'?t|does not)\s+work(?:\s+out)?\b|(?:we|you)\s+(?:don'?t|do not)\s+need\b|(?:isn'?t|is not|wasn'?t|was not)\s+working(?:\s+out)?\b|(?:takes?|took)\s+(?:over\s+|more than\s+|about\s+|almost\s+|nearly\s+)?\d[\d.,]*\s*(?:hours?|hrs?|h|minutes?|mins?|seconds?|secs?|days?|weeks?)\b|(?:bit|bites|burned|burnt)\s+us\b|(?:doesn'?t|does not|don'?t|do not)\s+(?:cover|support|work with)\b|would\s+(?:lock|tie)\s+us\s+(?:to|into|in)\b|(?:is|are|was|were)\s+(?:about\s+|almost\s+|nearly\s+)?(?:\d+(?:\.\d+)?\s*x|twice|three times|four times|ten times)\s+(?:the\s+(?:size|cost|price)|bigger|larger|slower|as slow|as big|as large|more expensive|the\s+bill)\b)`)
	// prefRule: "I'd rather we avoid ORMs", "I'd prefer we stay away from
	// reflection", "I'd rather you ask before deleting files".
	// ratherThanIn: where a preference's second option begins ("use
	// Postgres than MySQL", "use Vitest over Jest").
	ratherThanIn = mustPattern(`\s+(?:than|over)\s+`)
	// carrier: "over" followed by what a thing travels over ("JSON over
	// HTTP"), which is no alternative.
	carrier  = mustPattern(`^\s+over\s+(?:the\s+)?(?:https?|http/[23]|tcp|udp|tls|ssh|quic|grpc|websockets?|sse|mqtt|amqp|nats|unix sockets?|the wire|the network|stdio|pipes?)\b`)
	prefRule = mustPattern(`^(?:i'?d|i would|we'?d|we would)\s+(?:rather|prefer)\s+(?:that\s+)?(?:we|you)\s+((?:avoid|stay away from|not|never|always|keep|stick|use|ask|don'?t)\b.+)$`)
	// willBe: "The queue is going to be NATS, not RabbitMQ": a part of the
	// product and the named option it will be.
	willBe = mustPattern(`^(?:(?:the|our)\s+)?([\w\-/ ]{1,30}?)\s+(?:will be|'ll be|is going to be|are going to be)\s+(.+)$`)
	// Conventions stated as how things are: "All money amounts are stored
	// as integer cents", "Migrations live in db/migrations".
	allAre = mustPattern(`^(?:all|every|each)\s+(?:[\w\-/]+\s+){0,3}?(?:are|is|must|should|get|gets|go|goes|live|lives|returns?|uses?|has|have|needs?|owns?|runs?|exposes?|emits?|handles?|validates?|talks?|ships?)\s+\S.*$`)
	allNot = mustPattern(`^(?:all|every|each)\s+(?:the|of|these|those|my|one|single)\b|\b(?:passing|passed|pass|failing|failed|fails|broken|done|fixed|green|red|crash\w*|time|now|today|yesterday|works|working|looks?|seems?)\b`)
	// alwaysDone: "Prices are always stored in cents", "images get resized
	// on upload, never on the fly": how things are done, as a rule.
	alwaysDone = mustPattern(`^(?:the\s+|our\s+)?(?:[\w\-/]+\s+){1,3}?(?:(?:is|are)\s+(?:always|never)\s+(?:\w{2,}ed|written|kept|done|run|made|set|sent|built|held|shown|drawn|given)\b|(?:get|gets|are|is)\s+\w+ed\b.*,\s+never\b).*$`)
	// alwaysIs: "Money is always int64 minor units, never floats",
	// "Timestamps are always UTC": what a thing always is, named.
	alwaysIs    = mustPattern(`^(?:the\s+|our\s+|all\s+)?(?:[\w\-/]+\s+){1,3}?(?:is|are)\s+always\s+(?:in\s+|an?\s+)?([\w.\-+/]+)`)
	liveIn      = mustPattern(`^(?:[\w\-/]+\s+){0,2}?(?:(?:go|goes|live|lives|belong|belongs|stay|stays)\s+(?:in|under|inside|next to|beside|alongside)|comes?\s+from)\s+\S.*$`)
	mishap      = mustPattern(`\b(?:skipped|ignored|missed|lost|dropped|delayed|blocked|failed|broken|crashed|rejected|timed out|flagged)\b`)
	cappedAt    = mustPattern(`^(?:the\s+|our\s+|all\s+)?[\w\- ]{1,30}?\s+(?:are|is)\s+(?:(?:capped|limited|bounded|throttled|rate-limited)\s+(?:at|to)\s+\S|(?:fixed|pinned|locked|set)\s+(?:at|to)\s+\S*\d|(?:at most|at least|no more than|no larger than|never more than)\s+\d)`)
	followsRule = mustPattern(`^(?:the\s+|our\s+|all\s+)?[\w\- ]{1,30}?\s+(?:follows?|conforms? to|sticks? to|adheres? to)\s+(?:the\s+|our\s+)?([\w.\-]+(?:\s[\w.\-]+){0,2})$`)
	staysAt     = mustPattern(`^(?:the\s+|our\s+)?[\w\- ]{1,30}?\s+(?:stays?|remains?)\s+(?:at|under|below|above|within)\s+\S*\d`)
	// describes: a sentence that reports how things are, or complains,
	// rather than settling them ("images are stored in S3 but some are
	// missing", "deploys happen on Fridays, which is risky"). The forms
	// that read a state as a choice or a rule skip it.
	describes = mustPattern(`\b(?:but|which|that'?s why|even|still|right now|currently|by default|missing|failing|fails|failed|broken|a mess|slow|old|risky|expires?|expiring|too early|too late|forever|somehow|apparently|again|explains?|another team|other team|someone else|except|the problem|the issue|the bug|the culprit|the bottleneck)\b`)
	// comparative: "tests should be faster" is a wish, not a rule.
	// remark: a clause that remarks on the one before it ("…, which is
	// old", "…, that's why it fails"): the sentence reports, and its
	// clauses are not read one by one.
	remark      = mustPattern(`,\s+(?:which|that'?s why|that is why|that explains|that'?s the|that is the|so it|and it'?s|and that'?s)\b`)
	comparative = mustPattern(`\bshould be (?:\w+er|more|less|better|worse)\b`)
	modal       = mustPattern(`\b(?:has to|have to|must|needs to|need to|should)\b`)
	liveNot     = mustPattern(`^(?:it|this|that|they|he|she|i|you|we|the (?:bug|error|problem|issue|crash|fix|change|typo|leak))\b`)
	stickTo     = mustPattern(`^(?:please\s+)?stick to\s+(.+)$`)
	stickNot    = mustPattern(`^(?:the (?:task|point|question|topic|script|ticket)|it|that|this|what)\b`)
	stayRule    = mustPattern(`^(?:the\s+|all\s+|our\s+|every\s+)?(?:[\w\-/]+\s+){0,3}?(?:needs? to|has to|have to|must)\s+(?:stay|remain|be|keep)\s+\S.*$`)
	stayTask    = mustPattern(`\b(?:be|keep)\s+(?:\w+ed|\w+en|done|redone|split|rebuilt|rerun|reset|cut)\b|\b(?:here|there|now|first|again)\b`)
	stepDone    = mustPattern(`^(?:step\s+(\d{1,2})|(?:the\s+)?(.{1,40}?)\s+step)\s+(?:is|'s)\s+(?:done|finished|complete|completed)$`)
	skipStep    = mustPattern(`^(?:(?:let'?s|we'?ll|please|we can|you can)\s+)?(?:(?:skip|drop|remove|cut|scrap|forget(?: about)?)\s+(?:the\s+)?(?:step\s+(\d{1,2})|(.{1,40}?)\s+step)|(?:we\s+)?(?:don'?t|do not) need\s+(?:the\s+)?(?:step\s+(\d{1,2})|(.{1,40}?)\s+step))$`)
	imperLead   = mustPattern(`^(?:use|keep|make|avoid|prefer|stick to|always|never|please)\b`)
	imperAnd    = mustPattern(`,?\s+and\s+((?:keep|never|always|avoid|make sure|don'?t|do not|stick to|prefer|all|every|each)\s+.+)$`)
	// topicLead: "For search, let's go with …", "On the backend we'll use …":
	// the topic before the decision.
	topicLead = mustPattern(`^(?:for|on|in)\s+(?:the\s+)?[\w\-/. ]{1,30}?,?\s+((?:let'?s|we'?ll|we will|we'?re|we are|we|use|go with)\s.*)$`)
	// ellipsis: "use Airflow for scheduling and dbt for the transforms": a
	// second choice that shares the verb.
	ellipsis = mustPattern(`\s+and\s+(\S+(?:\s+\S+)?\s+for\s+.+)$`)
	// judgeComma: "Webpack is too much config, move the build to Vite": a
	// judgement, then the decision it explains.
	judgeComma = mustPattern(`^(.{3,80}?),\s+((?:so\s+)?(?:just\s+)?(?:switch|move|use|go with|let'?s|we'?ll|we will|replace|migrate)\b.+)$`)
	// genericUse: "let's use a simpler approach": no option named.
	// runTask: what is run as a task, not chosen ("the tests", "the
	// migrations", "the benchmarks").
	runTask       = mustPattern(`^(?:the\s+|all\s+|our\s+)?(?:tests?|test suite|suite|specs?|benchmarks?|linters?|migrations?|build|checks?|scripts?|commands?|e2e|load test|seed)\b`)
	genericUse    = mustPattern(`^(?:(?:a|an)\s+(?:different|simpler|better|new|cleaner|similar|other|smarter|quick|quicker|more|less)\b|another|the same|the existing|the current|the other|whatever|something|anything)\b`)
	shouldLead    = mustPattern(`^we (?:should|must|need to|have to)\b`)
	theToolTo     = mustPattern(`^the\s+(?:\S+\s+){1,3}to\s+\w+`) // "use the Chrome debugger to step through it"
	toolFor       = mustPattern(`^(?:the|a|an)\s+\S+\s+to\s+\w+`)
	shouldRule    = mustPattern(`^(?:[\w\-/]+\s+){1,3}should\s+(?:follow|use|match|be named|be|go|live|stay|always|never)\b`)
	droppedPast   = mustPattern(`^we(?:'ve| have)?\s+(?:ditched|dropped|scrapped|abandoned|got rid of|moved away from|removed)\s+(.+?)(?:\s+(?:last|earlier|this|a while|in|on|back)\b.*|,.*)?$`)
	forAll        = mustPattern(`^([\w.\-+/ ]{1,30}?)\s+for\s+(?:everything|all of it|all the things|the whole (?:thing|project|app|stack))\b`)
	maxRule       = mustPattern(`^(?:(?:the|our)\s+)?(?:(?:max|maximum|min|minimum)\s+[\w\- ]{1,30}?|(?:[\w\-]+\s+)?(?:rate limits?|quotas?|timeouts?|ttls?|budgets?|ceilings?)|(?:[\w\-]+\s+)(?:limits?|caps?|targets?))\s+(?:is|are|=|of)\s+\d|^(?:we\s+)?(?:target|aim for)\s+\d[\d.,]*\s*(?:fps|ms|s|seconds|%|rps|qps|req/s|mb|gb|kb)\b|^\d[\d.,]*\s*(?:ms|s|px|rem|kb|mb|%|fps)\s+(?:max|maximum|min|minimum|tops|at most)\b|^(?:max|maximum|min|minimum|at most|no more than)\s+(?:\d[\d.,]*\s*[a-z%]*|(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|fifty|a hundred)\s+[a-z]+)\s+[a-z]`)
	ensureAll     = mustPattern(`^(?:please\s+)?(?:make sure|ensure)\s+(?:that\s+)?(?:every|all|each|no|any)\b`)
	conditionLead = mustPattern(`^(?:if|when|whenever|unless|once|after|before|while|since|because|although|though|as long as|in case)\b`)
	// standingImper: "Keep the tests table-driven from now on": an
	// instruction made a standing rule.
	standingImper = mustPattern(`^(?:please\s+)?(?:keep|use|make|write|put|always|never|don'?t|do not|prefer|avoid|run|add)\s+\S.*\s(?:from now on|going forward|from here on|in future|in the future)$`)
	// keepNamed: "keep Vite", "keep using Vite for the build", "keep
	// PostgreSQL as the store".
	keepNamed = mustPattern(`^keep\s+(?:using\s+)?(\S+)(?:\s+for\s+.+|\s+as\s+(?:the|our|a|an|my|its|their)\s+.+)?$`)
	// keepPartOn: "keep the public API on JSON", "keep the workers in Go":
	// a part of the product and the option it stays on.
	keepPartOn = mustPattern(`^(?:please\s+)?keep\s+(?:the\s+|our\s+|all\s+)?([\w\-/ ]{1,30}?)\s+(?:on|in|with|using)\s+([\w.\-+#]+)`)
	// preferOver: "I prefer Go over Rust for this service".
	preferOver = mustPattern(`^(?:i|we)\s+(?:prefer|'d prefer|would prefer)\s+(.+?)\s+(?:over|to|rather than)\s+(.+)$`)
	// forPair: "TypeScript for the frontend, Go for the backend".
	// onTheWire: "Protobuf on the wire between services".
	onTheWire = mustPattern(`^([\w.\-+#]+)\s+(?:on|over)\s+the\s+wire\b`)
	forPair   = mustPattern(`^(\S+(?:\s\S+)?)\s+for\s+(?:the\s+|our\s+|all\s+)?([\w\-/ ]{1,30})$`)
	// asPart: "franz-go as the Kafka client", an option and the part it
	// is, without a verb.
	asPart = mustPattern(`^([\w.\-+/]+(?:\s[\w.\-+/]+)?)\s+as\s+(?:the|our)\s+([\w\- ]{1,30})$`)
	// namedIs: "the dead letter topic is events.dlq": a named thing of the
	// system (a topic, a bucket, a table) and the identifier it goes by.
	namedIs = mustPattern("^(?:the\\s+|our\\s+)?((?:[\\w\\-]+\\s+){0,3}?(?:topic|queue|bucket|table|channel|index|schema|namespace|branch|stream|exchange|prefix|subject|env var|variable|header|cookie|endpoint|route|port|region|registry|domain|hostname|image|tag))\\s+(?:is|will be|should be|is called|is named|goes by)\\s+`?([a-z0-9][\\w.\\-/:]*\\w)`?$")
	// subjectIs: "The database is Postgres": a part of the product and the
	// option of its kind.
	subjectIs = mustPattern(`^(?:(?:the|our)\s+)?([\w\- ]{1,25}?)\s+(?:is|will be|'ll be|is going to be)\s+([^\s,]+(?:\s[^\s,]+)?(?:\s+on\s+(?:the\s+)?[^\s,]+)?(?:\s+with\s+\S+(?:\s\S+){0,3})?)(?:,\s+(?:one|a|an|the|same|single)\s.*|(,\s+not\s+.+)|\s+and\s+(?:lives?|goes|sits|stays)\s.+|,\s+with\s+(\S.+))?$`)
	// wantToBe: "I want the API to be RESTful with JSON": a requirement.
	// partsAre: "Config files are TOML", a part without an article and a
	// well-known option of some kind (named only is too loose: "Builds are
	// Slow").
	// partUses: "Tests use testscript", "the frontend uses React", "releases
	// are built with GoReleaser", "images are stored in S3": a part of the
	// product and the named option it uses.
	partUses = mustPattern(`^(?:the\s+|our\s+|all\s+)?([\w\-/]+(?:\s[\w\-/]+){0,2}?)\s+(?:uses?|will use|should use|runs? on|talks?|speaks?|(?:will|is going to|are going to)\s+be\s+(?:(?:built|written|done|made|implemented)\s+)?(?:in|with)|(?:is|are)\s+(?:built|stored|kept|hosted|deployed|served|cached|shipped|sent|run|managed|handled|done|written|generated|rendered|tested|linted|formatted|bundled|packaged|published|signed|scheduled|queued|indexed|versioned|tracked|logged|validated|orchestrated|provisioned|monitored|encrypted|hashed|migrated|processed|persisted|trained|evaluated)(?:\s+as\s+[\w\-]+)?\s+(?:with|using|via|by|in|on|to|through))\s+([\w.\-+#]+)`)
	// isMust: "Windows support is a must", "offline mode is required".
	isMust   = mustPattern(`^(?:the\s+|our\s+)?[\w\-/ ]{1,40}?\s+(?:is|are)\s+(?:a must|a hard requirement|required|mandatory|non-negotiable|a requirement)(?:\s+(?:for|on|in|at|by|before|across)\s+.+)?$`)
	partsAre = mustPattern(`^([\w\-]+(?:\s[\w\-]+){0,2}?)\s+(?:are|is)\s+(?:all\s+)?(\S+)(?:\s+(?:instances|nodes|machines|boxes|servers|clusters|databases|buckets|containers|functions|tasks|pods|vms))?(?:\s+(?:on|behind|with)\s+[\w.\-]+(?:\s[\w.\-]+)?)?(?:\s+for\s+(?:now|v1|the mvp|the moment))?$`)
	// neverIn: "Secrets never go in env files, only in Vault": a rule about
	// where things go, not a choice of place.
	neverIn  = mustPattern(`^\S+(?:\s\S+){0,2}?\s+never\s`)
	wantToBe = mustPattern(`^(?:i|we)\s+want\s+(?:the\s+|our\s+|all\s+|every\s+)?(\S.*?)\s+to\s+(?:be|use|stay|run on|support)\s+\S.*$`)
	// dropAndGo: "Let's drop Datadog and go with Grafana Cloud, the bill is
	// out of control": an option dropped for another, in one breath.
	dropAndGo = mustPattern(`^(?:let'?s\s+|we'?ll\s+|we should\s+|i want to\s+|we need to\s+)?(?:drop|ditch|dump|get rid of|move off|move away from|retire)\s+(.+?)\s+and\s+(?:go with|use|switch to|move to|adopt|pick|take)\s+(.+)$`)
	// ratherNot: "I'd rather not use Pulumi here": an option turned down.
	ratherNot = mustPattern(`^(?:i'?d|i would|we'?d|we would)\s+rather\s+not\s+(?:use|adopt|bring in|add|go with|pull in|depend on|introduce)\s+(.+?)(?:\s+(?:here|for this|in this (?:project|repo|app|codebase|service)|for now|at all))?$`)
	dislike   = mustPattern(`^(?:i|we)\s+(?:don'?t|do not)\s+(?:like|trust)\s+(\S+(?:\s\S+)?)(?:\s+for\s+.+|\s+here)?$|^(?:i'?m|we'?re|i am|we are)\s+not\s+(?:a\s+)?fans?\s+of\s+(\S+(?:\s\S+)?)(?:\s+for\s+.+|\s+here)?$`)
	// goesThrough: "Email goes through Postmark", "analytics runs on
	// PostHog": a part of the product and the named service it uses.
	elidedPart  = mustPattern(`^([\w\-/ ]{1,30}?)\s+(?:in|on|to|into|through|via)\s+([\w.\-+#]+)$`)
	goesThrough = mustPattern(`^([\w\-/ ]{1,30}?)\s+(?:goes|go|runs|run|happens|happen|is written|are written|is sent|are sent)\s+(?:out\s+|over\s+|(?:nightly|daily|hourly|weekly|\w+ly)\s+)?(?:through|on|via|to|into|as|in)\s+(\S+)(?:[\s,].*)?$`)
	// partVia: "Payments through Stripe, obviously", "auth via Auth0": a
	// part of the product and the named option it goes through, no verb.
	// partWith: "Observability with OpenTelemetry", "GitOps with Argo CD":
	// a part of the product and, without a verb, the option that serves it.
	partWith = mustPattern(`^([\w\- ]{1,25}?)\s+with\s+([\w.\-+/]+(?:\s[\w.\-+/]+)?)(\s+(?:for|in)\s+[\w\- ]{1,30})?(?:,\s+(no\s.+)|(,\s+not\s+.+)|,\s+(?:and\s+)?([\w.\-+/]+\s+(?:for|in)\s+[\w\- ]{1,30}))?$`)
	// namedEach: "Kustomize overlays for each environment", "Helm charts for
	// every service": a well-known option, what it makes, and where.
	namedEach   = mustPattern(`^([\w.\-+/]+)\s+[\w\-]+\s+for\s+(?:each|every|all)\s+[\w\-]+(?:\s[\w\-]+)?$`)
	partVia     = mustPattern(`^([\w\-/ ]{1,30}?)\s+(through|via|on)\s+(\S+(?:\s\S+)?)(?:,\s.*)?$`)
	supportRule = mustPattern(`^(?:we\s+)?(?:only\s+)?support\s+\S.*?\s+(?:and up|and above|and later|and newer|or later|or newer)(?:\s+only)?$|^(?:we\s+)?support\s+\S.*\s+only$|^(?:we\s+)?(?:only\s+)?support\s+the\s+(?:last|latest|current)\s+(?:two|three|four|\d+)\s+(?:major\s+)?(?:versions?|releases?)\b|^(?:always\s+)?(?:respect|honou?r)\s+\S+`)
	// minVersion: "Python 3.12 is the minimum", "Node 20 is the oldest we
	// support".
	minVersion = mustPattern(`^(?:[\w.\-+# ]{1,20}?\s+v?\d[\w.]*\s+is\s+(?:the\s+|our\s+)?(?:minimum|min|baseline|floor|lowest (?:we support|supported)|oldest (?:we support|supported))\b|[\w.\-+#]{1,20}(?:\s[\w.\-+#]{1,20})?\s+v?\d[\w.]*\s+(?:minimum|at (?:the )?minimum|or (?:later|newer|above|higher))[.!]?$|(?:the\s+|our\s+)?(?:msrv|minimum supported [\w.]+ version)\s+is\s+v?\d)`)
	// practiceRule: "Type hints on every public function", "docstrings
	// everywhere", "mypy in strict mode": a practice stated without a verb.
	// Only practices are read so ("Errors on every page" is a complaint).
	practiceRule = mustPattern(`^(?:(?:full|proper|strict|complete|real|explicit)\s+)?(?:type hints|type annotations|types|docstrings|doc comments|unit tests|integration tests|tests|benchmarks|structured logging|error handling|input validation|license headers|changelog entries|request ids|context timeouts)\s+(?:(?:on|for|in|with|across)\s+(?:every|all|each|any)\b.*|everywhere(?:\s.*)?)$|^[\w.\-]+\s+in\s+strict\s+mode$`)
	// perRule: "one state file per environment", "a separate namespace per
	// team": a layout every case follows.
	perRule = mustPattern(`^(?:[^:]{1,60}:\s+)?(?:one|a single|exactly one|a separate|its own|their own)\s+[\w\-]+(?:\s[\w\-]+){0,3}\s+per\s+[\w\-]+(?:\s[\w\-]+){0,2}$`)
	// nobodyOnly: "Nobody applies Terraform from a laptop; only CI
	// applies", "nobody pushes to main": what nobody does, by a way or to
	// a place that makes it a rule ("nobody knows why" is a report).
	nobodyOnly = mustPattern(`^(?:nobody|no one|no-one)\s+\w+s\b.*(?:;\s*only\s+\S|\b(?:by hand|manually|directly|from (?:a|their|your|his|her) (?:laptop|machine|desktop)|to (?:prod|production|main|master)|in prod(?:uction)?|on fridays)\b)`)
	onlyRule   = mustPattern(`^(\S+(?:\s\S+)?)\s+is\s+the\s+only\s+(?:language|runtime|database|db|framework|dependency|library|tool|package manager|orm|cloud|provider|queue|cache|linter|formatter)\b`)
	// andVerb: a second decision joined to the first ("… and store links in
	// SQLite").
	andVerb = mustPattern(`\s+and\s+(?:then\s+)?((?:use|keep|store|put|deploy|host|run|write|ship|serve|build|cache|queue|index|send|log)\s+.+)$`)
	// useNamed: "use zerolog for logging", a named option used for a purpose
	// (not "use the same style", "use a sync.Pool there").
	stepNumber  = mustPattern(`\bsteps?\s+\d{1,2}\b`) // "do step 4 first": a plan's step, no option
	useTail     = mustPattern(`^use\s+\S+(\s+(?:anyway|anyways|then|though))$`)
	useNamed    = mustPattern(`^use\s+([\w.\-/+]+)(?:\s+(?:(?:strict\s+)?mode|strict|license|licence|library|framework|v?\d[\w.]*|hooks|modules|workspaces|runtime|driver|client|sdk|cli|(?:sorted\s+)?sets|streams|lists|hashes|topics|queues|(?:advisory\s+)?locks|partitions|buckets|functions|workers|triggers|(?:materialized\s+)?views|extensions|webhooks))?(?:\s+(?:for|in front of|behind|between|across|as|with|via|through|over)\s+.+)?$`)
	switchTo    = mustPattern(`^(?:(?:let'?s|we'?ll|we will|we'?re|we are|we'?re going to|we are going to|i'?m|we)\s+)?(?:switch|switching|move|moving|migrate|migrating|bump|bumping|upgrade|upgrading)\s+(?:(.+?)\s+)??(?:(?:from|off|off of|away from)\s+(.+?)\s+)?(?:and\s+)?(?:to|onto)\s+(.+)$`)
	replaceWith = mustPattern(`^(?:let'?s\s+|we'?ll\s+|we will\s+|we'?re\s+|we are\s+|i'?m\s+)?(?:replace|replacing)\s+(.+?)\s+(?:with|by)\s+(.+)$`)
	// verbWith: "we'll schedule with Prefect instead", "let's parse it
	// with Pydantic": a verb of no decision by itself and the option it is
	// done with.
	verbWith = mustPattern(`^(?:let'?s|we'?ll|we will|we'?re going to|we are going to)\s+((\w+)(?:\s+[\w\-]+){0,3}?\s+(?:with|using|via|through|in|on|behind)\s+(\S+).*)$`)
	// verbWithNot: verbs of work on something, not of how it is built
	// ("let's check on Kafka", "we'll dig in Redis").
	verbWithNot = mustPattern(`^(?:not|never|no|rerun|execute|test|retest|profile|lint|format|check|look|read|focus|work|start|begin|talk|think|wait|deal|help|play|debug|dig|stay|see|try|experiment|compare|benchmark|fix|poke|continue|stop|sit|ask|meet|chat|pair|follow|catch|get|be|go|come)$`)
	// imperIn: "Track experiments in MLflow, not Weights & Biases", "serve
	// the model behind FastAPI": an instruction whose object is done with a
	// well-known option.
	imperIn = mustPattern(`^((\w+)(?:\s+[\w\-]+){0,3}?\s+(?:with|using|via|through|in|on|behind)\s+([\w.\-+#]+)(?:[,\s].*)?)$`)
	// imperVerb: verbs that say how something is built, for imperIn; not
	// run, test, build, lint, write …, whose "run the tests with pytest" is
	// a task.
	// soThat: an instruction given for a purpose of the moment ("host the
	// demo on Vercel so I can show it").
	soThat      = mustPattern(`\bso (?:i|we|you|they) can\b`)
	imperVerb   = mustPattern(`^(?:authenticate|authorize|bill|charge|notify|email|track|serve|store|cache|log|queue|index|schedule|send|host|trace|monitor|manage|persist|render|route|validate|parse|train|version|call|parallelise|parallelize|vectorise|vectorize|offload|align|annotate|genotype|phase|assemble|trim|demultiplex|compress|orchestrate|containerise|containerize|deliver|stream|package|transcode|encode|ingest|caption|transcribe)$`)
	weAreOn     = mustPattern(`^we'?re (?:on|now on)\s+(.+)$`)
	insteadBare = mustPattern(`^(.{1,40}?)\s+(?:instead of|rather than)\s+(.+)$`)

	// removeNamed: "Remove Lodash, it bloats the bundle": a named option
	// taken out (not "remove the debug logs", a task).
	removeNamed = mustPattern(`^(?:let'?s\s+|we'?ll\s+|please\s+|we can\s+|we should\s+|we could\s+|i'?d\s+|we'?re going to\s+)?(?:remove|rip out|get rid of|take out)\s+(\S+)(.*)$`)
	dropForm    = mustPattern(`^(?:we'?re\s+|we are\s+|let'?s\s+|i'?m\s+|we'?ll\s+|we will\s+|we should\s+|we can\s+)?(?:dropping|drop|ditch|ditching|forget|forgetting|scratch|scrap|scrapping|kill|never ?mind|stop using|quit using)\s+(.+)$`)
	dontUse     = mustPattern(`^(?:do not|don'?t|let'?s not|we won'?t|we will not|we'?re not|we are not|we shall not|never|we don'?t|we do not|we no longer|we'?re no longer|we are no longer|we can'?t|we cannot)\s+(?:use|using|adopt|adopting|pick|go with|introduce|introducing|run|running|do|doing|supporting|bother with|bothering with|publishing to|publish to|shipping to|ship to|targeting|target|ship|shipping)\s+(.+)$`)
	// stateClause: a clause that says where or how something stands
	// ("payments stay on the web"), not an option.
	stateClause = mustPattern(`^[\w\-]+(?:\s[\w\-]+){0,2}\s+(?:stay|stays|remain|remains|live|lives|go|goes|happen|happens|is|are|isn'?t|aren'?t|is not|are not|doesn'?t|does not|won'?t|can'?t)\s+\S`)
	// forNowTail: how long a rejection holds, not part of the option.
	forNowTail = mustPattern(`\s+(?:for now|for the time being|in v1|for v1|at launch|for launch|in the first version|yet|for this|for that|for these|for those)$`)
	// skipNamed: "Skip Redux, Zustand covers what we need": a named option
	// turned down, and what covers for it.
	skipNamed  = mustPattern(`^(?:let'?s\s+|i'?d\s+|we'?d\s+|i would\s+|we would\s+)?skip\s+([\w.\-+/]+(?:\s[\w.\-+/]+){0,2}?)(?:\s+(?:for now|in v1|for v1|at launch))?(?:,\s+(.+))?$`)
	coversNeed = mustPattern(`^([\w.\-+/]+(?:\s[\w.\-+/]+)?)\s+(?:covers|handles|does)\s+(?:what we need|everything we need|all we need|the job)\b`)
	// swapFor: "Swap Firebase Auth for Clerk, we need organizations".
	swapFor = mustPattern(`^(?:let'?s\s+|we'?ll\s+|we should\s+)?(?:swap|swap out|trade)\s+(.+?)(?:\s+out)?\s+(?:for|with)\s+(.+)$`)
	// partInWith: "backend in Kotlin with Spring Boot 3": a part, its
	// language and its framework.
	partInWith = mustPattern(`^(?:the\s+|our\s+)?([\w\-]+(?:\s[\w\-]+)?)\s+in\s+([\w.#+\-]+)\s+with\s+(\S+(?:\s\S+){0,2})$`)
	// talkOver: "We'll talk to other services over gRPC, public API stays
	// REST": how parts talk, and what else holds.
	talkOver = mustPattern(`^(?:we'?ll\s+|we will\s+|let'?s\s+|(?:the\s+|our\s+)?[\w\-]+(?:\s[\w\-]+)?\s+)?(?:talk|speak|communicate)\s+(?:to|with)\s+(.+?)\s+(?:over|via|using|with)\s+([\w.\-+/]+)(?:,\s+(.+))?$`)
	// staysOption: "public API stays REST": a part kept on a known option.
	staysOption = mustPattern(`^(?:the\s+|our\s+)?([\w\-]+(?:\s[\w\-]+)?)\s+(?:stays|remains|stays on|remains on)\s+([\w.\-+/]+)$`)
	// ownsPart: "Flyway owns the migrations": a well-known tool and the
	// part it is responsible for.
	ownsPart = mustPattern(`^([\w.\-+/]+)\s+(?:owns|handles|takes care of|is responsible for)\s+(?:the\s+|our\s+|all\s+)?([\w\-]+(?:\s[\w\-]+)?)$`)
	// holdOff: "Let's hold off on Kafka until we actually need streaming":
	// an option turned down for now, and until when.
	holdOff = mustPattern(`^(?:let'?s\s+|we'?ll\s+|we should\s+|i want to\s+|we can\s+)?(?:hold off on|hold off with|put off|postpone|defer)\s+(.+?)(?:\s+((?:until|till|unless)\s.+))?$`)
	// everyDoes: "Every endpoint checks the tenant id from the JWT, never
	// from the body": what each case of a part does, a rule.
	everyDoes = mustPattern(`^(?:every|each)\s+[\w\-]+(?:\s[\w\-]+)?\s+(?:checks|validates|verifies|logs|emits|returns|uses|has|gets|carries|needs|requires|goes|runs|writes|reads|sends|takes|replies|responds|answers|retries|finishes|completes|mounts|starts|boots|loads|renders|calls|passes|owns|exposes|handles|stores|keeps|cites|links|quotes|includes|shows|says|records|tracks|stamps|references)\b.+$`)
	// emphasisTail: "…, no exceptions", "…, period".
	emphasisTail = mustPattern(`,?\s+(?:no exceptions|no excuses|no matter what|without exception|period|full stop|like everything else|like the rest|like always|as always|as usual|ever|not ever|never ever|we agreed on that|as we agreed|like we agreed|as agreed)[.!]*$`)
	// keepButDrop: "Keep Tailwind but drop daisyUI, the components fight
	// with our design tokens".
	keepButDrop = mustPattern(`^(?:i'?d\s+|i would\s+|let'?s\s+|we'?ll\s+|we should\s+)?keep\s+\S+(?:\s\S+)?\s+but\s+(?:drop|ditch|remove|lose|get rid of)\s+([\w.\-+/]+(?:\s[\w.\-+/]+)?)(?:,\s+(.+))?$`)
	// strictRule: "Credo runs in strict mode", "CI fails on any warning".
	strictRule = mustPattern(`^(?:[\w.\-]+\s+){1,3}?(?:runs?|is|are)\s+(?:in|on)\s+strict\s+mode\b|^(?:the\s+)?(?:ci|build|builds|lint|linting|linter|checks|pipeline|tests|test suite)\s+(?:fails?|breaks?)\s+on\s+any\s+\w+`)
	// fineInstead: "Plain SQL with pgx is fine", after an option turned
	// down ("… is enough" is the reason).
	fineInstead = mustPattern(`^(.{1,40}?)\s+(?:is|are)\s+(?:fine|enough(\s+for\s+.{1,40}?)?)[.!]*$`)
	// clauseOf: "the app pools connections itself": a clause, not an
	// option's name.
	clauseOf = mustPattern(`^(?:the|our|this|that|it|they|we)\s+(?:[\w\-]+\s+)?[a-z]+s\s+\w+`)
	// handledBy: "Stripe handles PCI", "the gateway already does that":
	// what makes an option turned down unneeded.
	handledBy = mustPattern(`^(?:the\s+|our\s+)?[\w.\-]+(?:\s[\w.\-]+)?\s+(?:handles|covers|does|gives|provides|owns|manages|takes care of)\b`)
	// publishTo: "Publish outbox events to Kafka", "Stream the traces to
	// Tempo": a part's flow sent to a well-known option, for good (not
	// "publish the test report to S3 for me").
	publishTo = mustPattern(`^(?:publish|stream|emit|ship)\s+(?:the\s+|our\s+|all\s+)?([\w\-]+(?:\s[\w\-]+){0,2}?)\s+(?:to|into)\s+([\w.\-+]+)(,\s+.+)?$`)
	// weWillNamed: "we'll hit a real Postgres …", after an option dropped.
	weWillNamed = mustPattern(`^(?:we'?ll|we will|we can|we'?re going to)\s+(?:just\s+)?`)
	// comparativeChoice: "plain cookie sessions are simpler".
	// hasBetter: "Nx has better caching", said after an option turned
	// down: the option that replaces it, and why.
	hasBetter         = mustPattern(`^(.{1,40}?)\s+(?:has|have|gives us|offers)\s+((?:much\s+|way\s+|far\s+|a lot\s+)?(?:better|faster|nicer|simpler|cleaner|saner)\b.*)$`)
	comparativeChoice = mustPattern(`^(.{1,40}?)\s+(?:is|are)\s+((?:much\s+|way\s+|a lot\s+|far\s+)?(?:simpler|easier|better|faster|cheaper|lighter|saner|nicer|cleaner|safer|more mature|more reliable|more than enough)\b.*)$`)
	// outOfScope: "Authentication is out of scope for the first version".
	outOfScope = mustPattern(`^(.{1,40}?)\s+(?:is|are)\s+(?:out of scope|not in scope|off the table)\b(?:\s+(?:for|in)\s+(.+))?$`)
	// namedDoes: "cargo-dist builds the installers for us".
	namedDoes = mustPattern(`^([\w.\-+/]+(?:\s[\w.\-+/]+)??)\s+((?:builds|does|handles|covers|generates|runs|ships|gives|gave us|provides|makes|takes care of|already|did|matches|matched|beats|beat|has its own|has their own|comes with|ships with)\b.*)$`)
	// useThatInstead: a clause, then "use that instead of X".
	useThatInstead = mustPattern(`^(.{3,120}?),\s+(?:so\s+)?(?:let'?s\s+|we'?ll\s+|please\s+)?(?:use|go with|switch to|move to|take)\s+(?:that|it|this|those|them)\s+instead\s+of\s+(.{2,60})$`)
	// optionPlace: "anyhow only in the binary", "thiserror in the library
	// crates".
	optionPlace = mustPattern(`^([\w.\-+/]+)\s+(?:only\s+)?(?:in|for|on|inside|within)\s+\S.*$`)
	// noUntilTurn: a turn that turns an option down until a condition
	// holds ("we agreed no microservices until we have …"), which is not
	// a decision put off (turnHold's "until we have").
	noUntilTurn = mustPattern(`(?:^|[.!:]\s+|(?:agreed|decided|settled)\s+(?:that\s+)?)(?:no|(?:let'?s\s+)?hold off (?:on|with)(?:\s+the)?)\s+[\w\-]+(?:\s[\w\-]+){0,3}\s+until\b|,\s+it'?s\s+[\w\-]+(?:\s[\w\-]+){0,4}\s+until\b`)
	// noUntil: "no microservices until we have more than three engineers".
	noUntil = mustPattern(`^(?:(?:we|i)(?:'ve| have)?\s+(?:decided|agreed|settled)(?:\s+that)?:?\s+)?no\s+(.{1,40}?)\s+((?:until|unless|before|while)\s+.+)$`)
	// insteadLead: "Instead of Flask, serve the model with BentoML".
	insteadLead = mustPattern(`^(?i:instead of|rather than)\s+([^,]{1,40}),\s+(\S.*)$`)
	// cadenceRule: "Checkpoints are written every 1000 steps", "Backups
	// are kept for 30 days": how often, or how long, something is done.
	cadenceRule = mustPattern(`^(?:(?:the|our|all)\s+)?[a-z][\w\-]*(?:\s[\w\-]+){0,2}?\s+(?:is|are|get|gets|must be|should be)\s+(?:\w{2,}ed|kept|run|built|taken|done|rebuilt|rerun|written|rewritten|sent|shown|drawn)\s+(?:(?:at least|at most|no more than|only)\s+)?(?:every\s+(?:\d[\d,.]*\s*)?[a-z]+|once\s+(?:a|per)\s+[a-z]+|(?:for|up to)\s+(?:a|one|\d+)\s+(?:hour|day|week|month|year)s?|hourly|daily|weekly|nightly|monthly|after\s+(?:\d[\d,.]*|a|one)\b(?:\s+(?:second|minute|hour|day|week|month|year)s?\b)?)`)
	// ttlRule: "30-day TTL", "a TTL of 15 minutes": how long a thing is
	// kept before it expires.
	ttlRule = mustPattern(`^(?:an?\s+)?\d[\d,.]*[\s-]?(?:second|minute|hour|day|week|month|s|m|h|d)s?\s+(?:ttl|expiry|expiration|lifetime)$|^(?:the\s+)?(?:ttl|expiry|expiration)\s+(?:is\s+|of\s+)?\d[\d,.]*\s*(?:second|minute|hour|day|week|month|s|m|h|d)s?\b`)
	// nothingExcept: "nothing in localStorage except the cart id".
	// scratchNoun: "scratch" as what kind of files or space, not "scrap".
	scratchNoun = mustPattern(`^scratch\s+(?:files?|space|dirs?|directory|directories|disk|disks|storage|data|volume|volumes|area|paths?)\b`)
	// nothingElse: "nothing else leaves the cluster".
	nothingElse   = mustPattern(`^nothing\s+else\s+(?:leaves|goes|gets|is|may|can|should|must|will|touches|writes|reads|runs|ships)\b`)
	nothingExcept = mustPattern(`^nothing\s+(?:goes\s+|is\s+(?:stored|kept|written|put)\s+)?(?:in|into|on|to)\s+\S.*\s+(?:except|but|other than|apart from)\s+\S`)
	// thresholdRule: "refunds over 500 euros need a second person to
	// approve": what a size or amount past a line requires.
	thresholdRule = mustPattern(`^(?:all\s+|any\s+|every\s+)?[a-z][\w\-]*(?:\s[\w\-]+)?\s+(?:over|above|under|below|of more than|of less than|bigger than|larger than)\s+[$€£]?\d[\d,.]*\s*(?:[a-z%]+\s+)?(?:need|needs|require|requires|must|have to|has to|go|goes|get|gets)\b`)
	// reportEvery: "devices report every 60 seconds", "the agent polls
	// hourly": how often a part of the product does its work.
	reportEvery = mustPattern(`^(?:(?:the|our|all|each|every)\s+)?[a-z][\w\-]*(?:\s[\w\-]+)?\s+(?:report|reports|poll|polls|sync|syncs|ping|pings|refresh|refreshes|send|sends|check in|checks in|upload|uploads|publish|publishes|heartbeat|heartbeats|flush|flushes|rotate|rotates|retry|retries)\s+(?:\w+\s+)?(?:every\s+\d[\d,.]*\s*[a-z]+|once\s+(?:a|per)\s+[a-z]+|hourly|daily|weekly|nightly)\b`)
	// retainRule: "Downsample to 5-minute averages after 30 days", "purge
	// raw rows after 90 days": what happens to data once it is that old.
	retainRule = mustPattern(`^(?:please\s+)?(?:downsample|roll up|aggregate|archive|delete|purge|drop|expire|compact|move)\s+.{1,60}?\s+after\s+\d[\d,.]*\s*(?:second|minute|hour|day|week|month|year)s?\b|^(?:(?:the|our|all)\s+)?[a-z][\w\-]*(?:\s[\w\-]+){0,2}?\s+(?:is|are|gets?|must be|should be)\s+(?:dropped|deleted|purged|removed|expired|archived|downsampled|rolled up|compacted)\s+after\s+\d`)
	// refuseRule: "the bootloader refuses anything unsigned": what a part
	// will not take, whoever asks.
	refuseRule = mustPattern(`^(?:the\s+|our\s+)?[a-z][\w\-]*(?:\s[\w\-]+)?\s+(?:refuses|rejects|only accepts|accepts only|denies|blocks)\s+(?:anything|any|every|all)\b`)
	// latencyRule: "p99 latency under 200 ms for all read endpoints".
	latencyRule = mustPattern(`^(?:(?:p\d{2}(?:\.\d)?|median|mean|average)\s+)?(?:latency|response time|response times|build time|build times|cold start|startup|startup time|page load|load time|lcp|fcp|inp|ttfb|tti|largest contentful paint|first contentful paint|time to interactive|time to first byte)\s+(?:must\s+(?:be|stay)\s+|should\s+(?:be|stay)\s+|stays?\s+|is\s+)?(?:under|below|less than|within|at most)\s+\d`)
	// placedOn: "Telemetry lands in TimescaleDB", "The device cloud runs as
	// a Go service on Fly.io": a part, a verb that places it, and, last,
	// the well-known option it is placed on.
	placedOn = mustPattern(`^(?:the\s+|our\s+|all\s+)?([\w\-]+(?:\s[\w\-]+){0,2}?)\s+(lands|land|lives|live|runs|run|goes|go|stays|stay|reports|report|flows|flow|ships|ship|syncs|sync|sits|sit|streams|stream|publishes|publish|is stored|are stored|is written|are written|is built|are built|is deployed|are deployed|is hosted|are hosted|is kept|are kept|is sent|are sent)\s+(?:[\w\-]+\s+){0,4}?(?:in|on|over|via|through|into|to|with|as|under)\s+(?:a\s+|an\s+|the\s+)?([\w.\-+/]+)((?:\s+[\w.\-+/]+){0,2})(?:,\s+[\w\-]+(?:\s[\w\-]+){0,2})?$`)
	// buildOn: "we're building this on Laravel 11 with Livewire": what the
	// whole thing is built on.
	buildOn = mustPattern(`^(?:we'?re|we are|we'?ll be|we will be|let'?s be|i'?m|i am)\s+building\s+(?:this|it|the (?:app|site|service|project|backend|frontend|whole thing))\s+(?:on|in|with)\s+(\S+(?:\s\S+){0,4})$`)
	// dontPullIn: "Don't pull in Vue, Livewire is enough": a named option
	// kept out, and why.
	dontPullIn = mustPattern(`^(?:don'?t|do not|let'?s not|we won'?t|we will not|never|(?:i|we)(?:\s+really)?\s+(?:don'?t|do not)\s+want\s+to)\s+(?:pull in|bring in|add|install|depend on|reach for)\s+([\w.\-+/]+(?:\s[\w.\-+/]+)?)(?:\s+(?:for|in|into)\s+(?:the\s+)?[\w\-]+(?:\s[\w\-]+)?)?(?:,\s+(.+))?$`)
	// canOnly: "Students can only see courses they are enrolled in": who
	// may do what, a rule.
	canOnly = mustPattern(`^(?:the\s+|our\s+)?[\w\-]+(?:\s[\w\-]+)?\s+(?:can|may)\s+only\s+\w+\s+\S`)
	// wantToKeepOut: what follows "I don't want" when it keeps an option
	// out: "to support Safari for now", "to use Redux here".
	wantToKeepOut = mustPattern(`^to\s+(?:support|use|adopt|add|ship|maintain|bring in|pull in|depend on)\s+(.+)$`)
	// weAlways: "We never send page content to our servers": what we
	// always or never do, in the present, a rule.
	// partNever: "the API never touches the bytes": what a part of the
	// system is never to do, by design (not "the webhook never fires", a
	// fault).
	partNever = mustPattern(`^(?:the\s+|our\s+)?([\w\-/]+(?:\s[\w\-/]+){0,2}?)\s+(?:must\s+|should\s+|will\s+)?never\s+(?:touch|touches|see|sees|store|stores|write|writes|read|reads|talk to|talks to|hold|holds|log|logs|expose|exposes|send|sends|know|knows|call|calls|own|owns|access|accesses|depend on|depends on|import|imports|print|prints|show|shows|display|displays|echo|echoes|upload|uploads|leave|leaves)\b`)
	weAlways  = mustPattern(`^(?:we|you)(?:\s+will|'ll|\s+must|\s+should)?\s+(?:never|always)\s+(?:send|store|log|keep|write|read|ship|deploy|push|merge|commit|call|expose|share|collect|track|use|run|delete|return|accept|trust|cache|encrypt|hash|sign|check|validate)\b`)
	// partIn: "Popup UI in Preact, it's tiny": a part and the well-known
	// language or framework it is written in, without a verb.
	partIn = mustPattern(`^([\w\- ]{1,25}?)\s+in\s+([\w.\-+#/]+)(?:,\s+(.+)|\s+(?:through|with|via|using|behind)\s+[^,]+)?$`)
	// partColonVia: "Auth: magic links through Resend".
	partColonVia = mustPattern(`^([\w\- ]{1,25}?):\s+[\w\- ]{1,30}?\s+(?:through|via|with|using|on)\s+([\w.\-+/]+(?:\s[\w.\-+/]+)?)$`)
	// targetsOnly: "The extension targets Manifest V3 only".
	targetsOnly = mustPattern(`^(?:the\s+|our\s+)?[\w\- ]{1,25}?\s+(?:targets|supports|runs on)\s+\S.*\s+only$`)
	// weSkip: "We're skipping voice features entirely": a feature left out
	// for good (or for the version), not a step skipped today.
	// makeIt: "make it installable with pipx": how the product is to be
	// had, with the option named.
	makeIt = mustPattern(`^make\s+(?:it|the (?:cli|app|tool|package|library|service))\s+(?:\w+able|available)\s+(?:with|via|through|from|on)\s+([\w.\-+/]+)(?:,\s+(.+))?$`)
	// defaultIs: "output is plain text by default with a --json flag".
	defaultIs = mustPattern(`^(?:the\s+)?[\w\- ]{1,25}?\s+(?:is|are)\s+[\w.\-+/ ]{2,40}?\s+by default,?\s+(?:with|and)\s+(?:an?\s+)?(?:--?[\w\-]+|flag|option|switch)`)
	// needEvery: "I need every command to exit non-zero on failure".
	needEvery = mustPattern(`^(?:i|we)\s+(?:need|want)\s+(?:every|all|each)\s+[\w\- ]{1,30}?\s+to\s+\w+`)
	// askFirst: "nothing else without asking me".
	askFirst = mustPattern(`^(?:nothing|no (?:new )?(?:deps|dependencies|packages|libraries))(?:\s+else|\s+more|\s+new)?\s+without\s+(?:asking|checking with|approval|my ok|telling)`)
	// winsForm: "Vitest wins, Jest's ESM support is still painful": a
	// conclusion, with the judgement of the other option after it.
	winsForm = mustPattern(`^([\w.\-+/]+(?:\s[\w.\-+/]+)?)\s+(?:wins|is the winner|takes it)(?:\s+on\s+(?:both|all|every)(?:\s+\w+)?|\s+(?:hands down|easily|clearly|overall))?(?:,\s+(?:so\s+)?(?:let'?s\s+)?(?:go with it|use it|pick it|take it))?(?:,\s+(.+))?$`)
	// bringBack: "bring Nx back, the caching alone is worth it": an option
	// taken back, with why.
	bringBack = mustPattern(`^(?:let'?s\s+|we'?ll\s+|please\s+)?bring\s+(?:([\w.\-+/]+(?:\s[\w.\-+/]+)?)\s+back|back\s+([\w.\-+/]+(?:\s[\w.\-+/]+)?))(?:\s+(?:for|in|on|as)\s+([^,]{2,40}))?(?:,\s+(.+))?$`)
	// onlyOption: "minitest only", an option and nothing else.
	onlyOption = mustPattern(`^(?:use\s+)?([\w.\-+/]+(?:\s[\w.\-+/]+)?)\s+only[.!]?$`)
	// youKeep: "you keep adding devise", "stop suggesting Heroku": what the
	// agent is told to stop bringing in.
	youKeep = mustPattern(`^(?:you keep|you'?re still|stop|quit|please stop|don'?t keep)\s+(?:adding|suggesting|using|bringing in|reaching for|pulling in|proposing|putting|recommending|writing|introducing)\s+([^,—–]+?)(?:\s*[,—–]\s+(.+))?$`)
	// rollOwn: "we roll our own auth with has_secure_password".
	rollOwn = mustPattern(`^(?:we|we'?ll|let'?s)\s+(?:roll|build|write|do|run|host)\s+our\s+own\s+(.+)$`)
	// wholePoint: ", that was the whole point": the reason of the choice
	// before it is that it is the point.
	wholePoint = mustPattern(`,\s+(?:that(?:'s| was| is)|which (?:was|is))\s+the\s+(?:whole\s+)?point$`)
	// underPath: "service objects under app/services": where a kind of
	// code goes, by its path.
	// pathPlace: "scratch files go to /scratch/$USER and get deleted when
	// the run ends": where some files are written, a path.
	pathPlace = mustPattern(`^(?:the\s+|all\s+|our\s+)?[\w\-]+(?:\s+[\w\-]+){0,2}?\s+(?:go|goes|are written|get written|is written|are stored|are kept|are saved|land|lands)\s+(?:to|in|into|under)\s+(?:/|~/|\$)\S*`)
	// fineButSkip: "trimming with fastp is fine but skip it for the PacBio
	// runs": a step kept, with the runs it is left out of.
	fineButSkip = mustPattern(`^.{3,60}?\s+(?:is|are)\s+fine\s+but\s+(?:skip|drop|disable|turn off|leave out|don'?t (?:use|run|do))\s+(?:it|that|this|them)\s+(?:for|on|in|with|during)\s+\S`)
	// timeBudget: "The test profile has to finish in under 10 minutes on
	// a laptop".
	timeBudget = mustPattern(`^(?:the\s+|our\s+|every\s+|each\s+|all\s+)?[\w\- ]{2,30}?\s+(?:has to|have to|must|should|needs? to)\s+(?:finish|run|complete|build|start|boot|load|pass|respond|return|deploy)\s+(?:in|within)\s+(?:under\s+|less than\s+)?\d`)
	underPath  = mustPattern(`^(?:the\s+|all\s+)?[\w\- ]{2,30}?\s+(?:under|in|into)\s+[\w.\-]+/[\w./\-]*$`)
	// noThenUse: "no Celery, we'll use django-q for the background tasks":
	// an option turned down and what is used instead.
	noThenUse = mustPattern(`^no\s+([\w.\-+/]+(?:\s[\w.\-+/]+)?),\s+(?:we'?ll|we will|let'?s|we|just)\s+(?:use|go with|run|do)\s+(.+)$`)
	// noReason: "No split settings modules, they always drift": an option
	// turned down, with what it does as the reason.
	noReason = mustPattern(`^no\s+([\w.\-+/&]+(?:\s[\w.\-+/&]+){0,3}?),\s+((?:we\s+(?:can'?t|cannot|don'?t|do not|won'?t)\s+\w+.*|(?:they|it|those|these|that)(?:'re|'s|\s+are|\s+is|\s+always|\s+never|\s+just|\s+only|\s+keep|\s+tend to|\s+break|\s+drift|\s+rot)\b.*))$`)
	// skipFor: "skip the admin dashboard for this milestone, support can
	// use the database": a part of the product put off, with its reason.
	skipFor = mustPattern(`^(?:let'?s\s+|we'?ll\s+|we can\s+|we should\s+)?skip\s+(?:the\s+|an?\s+)?([\w.\-+/]+(?:\s[\w.\-+/]+){0,3}?)\s+(?:for (?:this|the first|the next|our first) (?:milestone|release|version|iteration|sprint|cut)|for the mvp|in the mvp|until (?:after )?(?:launch|later|v2|the beta))(?:,\s+(.+))?$`)
	// talkedAbout: "we talked about GraphQL for the mobile API but honestly
	// REST is fine": an option considered and set aside, with why.
	talkedAbout = mustPattern(`^(?:we|i)\s+(?:talked about|discussed|considered|looked at|thought about|were going to use)\s+([\w.\-+/]+(?:\s[\w.\-+/]+)?)(?:\s+for\s+.+?)?,?\s+but\s+(?:honestly\s+|really\s+|frankly\s+|i think\s+|tbh\s+)?(.+)$`)
	weSkip      = mustPattern(`^(?:we'?re|we are|we'?ll be|we will be)\s+skipping\s+(.+?)\s+(?:entirely|altogether|completely|for good|in v1|for v1|at launch)$`)
	// partColon: "Crash reporting: Sentry": a part, a colon, its option.
	// partColonEach: "Errors: thiserror in the library crates, anyhow only
	// in the binary": a part and an option for each place.
	partColonEach = mustPattern(`^([\w\- ]{1,25}?):\s+([^,]+,\s+[^,]+)$`)
	partColon     = mustPattern(`^([\w\- ]{1,25}?):\s+([\w.\-+/]+(?:\s[\w.\-+/]+){0,2}?)(?:,?\s+(?:on our own (?:box|boxes|servers?|hardware|machines?|infra)|self-hosted|in-house|managed))?(?:,\s+with\s+[^,]+|,\s+((?:the|our|it|we|they|nothing|no)\s.+))?$`)
	// notBuild: "Let's not bother with a web UI", "we won't support
	// Windows": a part of the product or a platform left out.
	notBuild = mustPattern(`^(?:(?:let'?s not|we won'?t|we will not|we'?re not going to|we are not going to)\s+(?:bother with|bother building|build|add|support|ship|offer|implement|do)|(?:we don'?t|we do not)\s+(?:support|ship|offer))\s+(?:an?\s+|the\s+|any\s+)?(\S.*?)$`)
	// notBuildHere: what is left out only here ("let's not add tests for
	// this") is a one-off request.
	notBuildHere = mustPattern(`\b(?:this|that|these|those|here|it|them)$`)
	voteYes      = mustPattern(`^(.{2,40}?),?\s+(?:yes|yep|yeah|definitely|for sure|please)$`)
	voteNo       = mustPattern(`^(.{2,40}?)(?:\s+(?:is|are)\s+(?:a\s+)?|,?\s+)(?:no|nope|no way|not now|never)$`)
	scopeTail    = mustPattern(`\s+(?:at launch|for launch|for (?:the )?(?:v\d[\w.]*|mvp|first release|beta)|in (?:v\d[\w.]*|the mvp|the first release))$`)
	noForm       = mustPattern(`^no\s+(?:to\s+)?(.+)$`)
	notForm      = mustPattern(`^not\s+(.+)$`)
	turnedDown   = mustPattern(`^(.{1,50}?)\s+(?:was|were|got|has been|have been)\s+(?:turned down|rejected|vetoed|ruled out|shot down|nixed|killed)(?:\s+by\s+(?:the\s+)?(.{1,40}?))?[.!]?$`)
	canGo        = mustPattern(`^(.{1,50}?)\s+(?:can go|can be dropped|can be removed|can be cut|isn'?t needed|is not needed|aren'?t needed|are not needed)(?:,\s+(.+?))?[.!]?$`)
	stepNamed    = mustPattern(`^step \d{1,2}\s*\((.+)\)$`)
	isOut        = mustPattern(`^(.{1,40}?)(?:\s+(?:is|are)|'s)\s+(?:out|gone|dead|rejected|off the table|a no-go|a no|a nope|not an option|ruled out|a hard no|not happening|off limits|a non-?starter|a dealbreaker)(?:\s+for\s+(?:v\d[\w.]*|version \d\S*|1\.0|the (?:first|initial) (?:release|version)|the mvp|launch|this release|now))?(?:,?\s+(?:after all|then|anymore|any more))?$`)
	// someday: a condition that has not come ("if they get big", "once it
	// grows", "when we outgrow it").
	someday      = mustPattern(`\s(?:if|once|when|in case)\s+\S+\s+(?:get|gets|grow|grows|become|becomes|hit|hits|outgrow|outgrows|ever)\b`)
	conditionMid = mustPattern(`\s(?:unless|except|outside of|outside|when|if|until)\s`)
	dontWant     = mustPattern(`^(?:i|we)\s+(?:don'?t|do not)\s+want\s+(.+?)(?:\s+(?:in|for|anywhere in)\s+(?:this|the|our)\s+.+)?$`)
	wontCut      = mustPattern(`^(.{1,30}?)\s+(?:won'?t|doesn'?t|does not|will not)\s+cut it$`)
	noMishap     = mustPattern(`^(?:issues|bugs|errors|complaints|incidents|surprises|downtime|outages|crashes|regressions|response|reply|answer|results?|difference|change)\b`)
	noChitChat   = mustPattern(`^(?:worries|worry|problem|problems|idea|rush|thanks|way|need|matter|one|doubt|wait|more|luck|pressure|clue|comment)\b`)

	alwaysNever  = mustPattern(`^(?:please\s+|make sure\s+(?:that\s+)?(?:we\s+|you\s+)?|ensure\s+(?:that\s+)?(?:we\s+|you\s+)?)?(?:never|always|must never|must always)\s+(\S.+)$`)
	notRules     = mustPattern(`^(?:always|never)\s+(?:mind|happy|glad|nice|good|fun|mind that)\b`)
	avoidForm    = mustPattern(`^(?:(?:let'?s|we should|we must|we'?ll|we will)\s+)?(?:avoid|prefer|only use|we prefer|we avoid)\s+\S.+$`)
	dontRule     = mustPattern(`^(?:do not|don'?t|please don'?t|please do not)\s+(\w+)\b.+$`)
	dontSkip     = mustPattern(`^(?:worry|forget|bother|mind|decide|know|think|stop|care|rush|panic|hesitate|wait|overthink|be)$`)
	mustForm     = mustPattern(`^(?:[\w/.'-]+\s+){0,5}?(?:must|mustn'?t|shall)\s+(?:not\s+|never\s+|always\s+)?\w+.*$`)
	standingRule = mustPattern(`\b(?:needs?|must|should|always|never|every|all|no)\b`)
	// fineWith: "i guess X is fine for now", "X is good enough for v1".
	fineWith = mustPattern(`^(?:(?:on|for|in)\s+[\w.\- ]{1,20},\s+)?(?:(?:i guess|i think|i suppose|ok|okay|fine|alright|sure|actually)[,\s]+)?(?:then\s+)?(.{2,40}?)\s+(?:is|are|'s)\s+(?:fine|ok|okay|good enough|plenty|enough|needed after all|required after all|back in|back on the table)((?:\s+(?:for now|for v1|for the mvp|for this|for these|for that|for (?:the|our|one|a|an|some)\s+[\w\- ]{2,30}))?)(?:\s+(?:then|by me|with me|actually|after all))?(?:[,.]?\s+i (?:guess|think|suppose))?$`)
	// tryingWith: what is done with an option that is no choice of it
	// ("struggling with Redis", "experimenting with Bun").
	tryingWith = mustPattern(`^(?:still\s+)?(?:struggling|fighting|dealing|debugging|having|playing|experimenting|messing|tinkering|working|helping|starting|done|stuck|trouble|issues|problems|help)\b`)
	// activityWith: "<activity> with <option>[ in <place>]".
	activityWith = mustPattern(`^([a-z][\w\-]*(?:\s[\w\-]+){0,2}?)\s+with\s+(\S+)(?:\s+(?:in|on|for)\s+[\w\-]+(?:\s[\w\-]+)?)?$`)
	// doneWith: "Passwords are hashed with argon2id", "tokens are signed
	// with EdDSA".
	doneWith = mustPattern(`^(?:(?:the|our|all)\s+)?[\w\- ]{1,30}?\s+(?:are|is)\s+(?:hashed|encrypted|signed|compressed|serialized|encoded|validated|parsed)\s+with\s+(\S+)$`)
	// keptAs: "[all ]timestamps are stored in local time", "store
	// timestamps as UTC".
	keptAs = mustPattern(`^(?:(?:all|the|our)\s+)?([a-z][\w\-]*(?:\s[a-z][\w\-]*)?)\s+(?:are|is|must be|should be|have to be|has to be|need to be|needs to be)\s+(stored|kept|saved|written|persisted)\s+(in|as)\s+(.{2,40}?)[.!]?$|^(store|save|write|persist)\s+(?:all\s+|the\s+)?((?:[a-z][\w\-]*\s)?[a-z][\w\-]*s)\s+(in|as)\s+(.{2,40}?)[.!]?$`)
	// newAmount: "make it 5 retries for the webhook sender", "bump it to
	// 60 seconds".
	// amountTo: "raise the retries to 5", "lower the TTL to 60 seconds":
	// a new amount for a thing (group 1 from the verb on, group 2 the
	// thing).
	// workPractice: how the work is to be done.
	workPractice = mustPattern(`^(?:please\s+)?(?:always\s+)?(?:ask\s+(?:me|us|first)\s+(?:before|first|when)\b.{2,80}|commit\s+(?:after|before|every|each|often|in small)\b.{0,60}|stay\s+(?:within|under|below|inside)\s+.{2,60}|write\s+(?:the\s+|all\s+)?(?:docs|documentation|comments|commit messages|changelog|readme)\s+in\s+.{2,40}|(?:everything|all of it|it all|the whole thing)\s+(?:has to|must|needs to|should)\s+.{2,60}|use\s+(?:conventional commits|semantic versioning|semver|trunk-based development|feature branches|squash merges|signed commits))$`)
	// labelledRate: a limit named, then its amount per something (group
	// 1 the limit, 2 the amount).
	labelledRate = mustPattern(`^(?:(?:let'?s|please|we'?ll|we will|we should)\s+)?(?:add\s+|set up\s+|use\s+|enforce\s+)?((?:rate|request|api|upload|login|concurrency|connection|retry|quota)[\w\- ]{0,20}?)\s*(?::|,|—|–|-)\s+(\d[\d.,]*\s*[a-z%]*(?:\s+[\w\-]+){0,3}?\s+per\s+[\w\- ]{2,30})$`)
	// makeProperty: "make the API stateless", "make every handler
	// idempotent": a property the design must have.
	makeProperty = mustPattern(`^(?:(?:let'?s|please|we should|we need to|we'?ll|we will)[,\s]+)?(make\s+(?:the|our|every|each|all(?:\s+the)?)\s+[\w\-/ ]{1,40}?\s+(?:stateless|idempotent|immutable|read-only|thread-safe|async|asynchronous|synchronous|configurable|pluggable|deterministic|reproducible|resumable|retryable|backwards?-compatible|private|internal|optional|opt-in|opt-out|lazy|offline-first|mobile-first|accessible|type-safe|append-only|single-tenant|multi-tenant)(?:\s+(?:by default|from now on|everywhere|throughout))?)$`)
	// partIsNamed: "Primary keys are UUIDv7", "pagination is
	// cursor-based": a part of the design and the named thing or kind it
	// is (group 1 the part, group 2 what it is).
	partIsNamed   = mustPattern(`^(?:the\s+|our\s+|all\s+)?([a-z][\w\-/]*(?:\s+[\w\-/]+){0,2}?)\s+(?:is|are)\s+([\w.+/\-]+)(?:\s+for\s+[\w\- ]{2,40})?$`)
	reportSubject = mustPattern(`^(?:option|choice|alternative|candidate|pick)\b|\b(?:problem|issue|error|bug|culprit|cause|bottleneck|blocker|hotspot|slowdown|leak|regression|failure|reason|deadline|date|customer|client|owner|reviewer|status|result|answer|question|difference|catch|fix|name|winner|plan|goal|idea|point|thing|one|output|response|message|log|trace|stack|version|release|branch|commit|ticket|pr|task|todo|step|eta|default)s?$`)
	kindSuffix    = mustPattern(`-(?:based|first|driven)$`)
	versionThing  = mustPattern(`\b(?:version|release|tag|semver|changelog)\b`)
	amountTo      = mustPattern(`^(?:(?:let'?s|please|ok|okay|we should|we need to|we'?ll|we will)[,\s]+)?((?:bump|raise|lower|increase|reduce|decrease|set|change|cut|drop)\s+(?:the\s+|our\s+)?([a-z][\w\- ]{0,40}?)\s+(?:down\s+|up\s+)?to\s+\d[\d.,]*\s*[a-z%]*(?:/[a-z]+)?(?:\s+[\w\-/ ]{1,40})?)$`)
	newAmount     = mustPattern(`^(?:(?:let'?s|please|ok|okay)[,\s]+)?(?:make (?:it|that)|(?:change|bump|set|raise|lower|increase|reduce) (?:it|that|this) to)\s+\d[\d.,]*\s*[a-z%]*(?:/[a-z]+)?(?:\s+[\w\-/ ]{1,40})?$`)
	// worksFor: "sure, Nakama works", "ok Resend works for us".
	worksFor = mustPattern(`^(?:sure|ok|okay|yes|yeah|yep|fine|alright)[,!]?\s+(\S+(?:\s\S+)?)\s+works(?:\s+for\s+(?:me|us))?(?:,\s+(.+))?$`)
	// revisitTail: a note after a dash on when the choice may be looked at
	// again ("— we can revisit once the reports get heavy").
	revisitTail = mustPattern(`\s+(?:—|–|--)\s+(?:(?:and\s+)?(?:we\s+can|we'?ll|we\s+will|we\s+could|can|let'?s|i'?ll)\s+)?(?:revisit|reconsider|re-?evaluate|look at it again|look again)\b[^—–]*$`)
	// negWord opens what turns something down ("no Cassandra").
	negWord = mustPattern(`^(?:no|not|never|nor|nothing|none)\b`)
	// neverOption: "[<choice> — ]never <option>[ again][, <why>]".
	neverOption = mustPattern(`^(?:(.+?)(?:\s+—\s+|,\s+|;\s+))?never\s+([\w.+#/\-]+(?:\s[\w.+#/\-]+){0,2}?)(?:\s+(?:for|in|on)\s+[\w\- ]{1,30}?)?(?:\s+again|\s+ever)?[.!]?(?:(?:,|\s+—)\s+(.+))?$`)
	// plainInstead: "plain CSS transitions", "just cron", "vanilla JS",
	// said as what is used after an option is turned down.
	plainInstead = mustPattern(`^(?:just|plain|vanilla|simple)\s+[\w.\-+#]+(?:\s[\w.\-+#]+){0,2}[.!]?$`)
	// plainOn: what is done plainly instead, and where ("plain log lines
	// on stderr").
	plainOn = mustPattern(`^(?:just\s+)?(?:plain|simple)\s+[a-z][\w\-]*(?:\s[a-z][\w\-]*){0,2}\s+(?:(?:on|to|in|into)\s+[\w.\-/]+|keyed\s+(?:on|by)\s+.{1,60})[.!]?$`)
	// onlyWhere: an option kept for one place only ("anyhow only in the
	// binary").
	onlyWhere = mustPattern(`^[\w.+#/\-]+\s+only\s+(?:in|for|on|inside|within)\s+(?:the\s+)?\S`)
	// envOnly: a setting kept for one environment ("local only for the
	// test profile", "mocks only in unit tests"), whatever its first word.
	envOnly = mustPattern(`^[\w.+#/\-]+\s+only\s+(?:in|for|on|during)\s+(?:the\s+|our\s+)?(?:[\w\-]+\s+)?(?:tests?|testing|dev|development|local|ci|staging|production|prod|profile|debug|debugging)\b`)
	// respectsSetting: "Colors respect NO_COLOR", "the CLI honors
	// XDG_CONFIG_HOME".
	respectsSetting = mustPattern(`^(?:[A-Za-z][\w\- ]{0,24}?\s+)?(?:always\s+)?(?:respects?|honou?rs?)\s+(?:the\s+)?(?:[A-Z][A-Z0-9_]{2,}|[\w.]*[\-_][\w.\-_]*)\b`)
	// throughVerb: a verb before "through", which makes the sentence a
	// rule of where things go ("Tokens go through the vault agent").
	throughVerb = mustPattern(`\b(?:go|goes|went|flow|flows|run|runs|come|comes|pass|passes|route|routes|ship|ships|deploy|deploys|happen|happens|move|moves|land|lands|get|gets|sync|syncs|talk|talks|send|sends|is|are|was|were)$`)
	// partThrough: "dark mode through CSS variables on :root[, …]".
	partThrough = mustPattern(`^([a-z][\w\-]*(?:\s[\w\-]+)?)\s+(?:through|via)\s+([\w.\-+#]+(?:\s[\w.\-+#]+){0,2}?)(?:\s+(?:on|in|at)\s+\S+)?(?:,\s+(.+))?$`)
	// withAsRole: "<choice>, with <option> as the fallback".
	withAsRole = mustPattern(`^(.+?),\s+with\s+([\w.+#/\-]+(?:\s[\w.+#/\-]+){0,2}?)\s+as\s+(?:the\s+|a\s+|our\s+)?(fallback|backup|default|second factor|secondary|failover)[.!]?$`)
	// ruleAfterComma: "<choice>, nobody …", "<choice>, <option> only
	// where …".
	ruleAfterComma = mustPattern(`^(.+?),\s+(?:(?:nobody|no one|no-one)\s+\w+\s+\w|([\w.+#/\-]+(?:\s[\w.+#/\-]+)?)\s+only\s+(?:where|when|if|unless)\s+\w)`)
	// ruleAfterDash: a rule said after a dash, which is no reason.
	ruleAfterDash = mustPattern(`^(?:(?:nobody|no one|no-one)\s+\w|(?:never|always)\s+\w+\s+\w)`)
	// fallbackRule: "fall back to the cached rate after 800 ms": what
	// happens when a part does not answer in time.
	fallbackRule = mustPattern(`^(?:(?:always|then)\s+)?(?:[a-z][\w\-]*(?:\s[a-z][\w\-]*)?\s+)?(?:fall back|falls back|time out|times out|give up|gives up|fail over|fails over|retry|retries)\b.*\b(?:after|within|past)\s+\d`)
	// imperativeRule: a rule said as an order of how data is handled
	// ("redact them before the prompt is built", "trim the oldest chunks
	// first").
	imperativeRule = mustPattern(`^(?:always\s+)?(?:redact|strip|mask|trim|truncate|evict|sanitize|sanitise|escape|validate|hash|encrypt|anonymi[sz]e|pseudonymi[sz]e)\s+\S+.*\b(?:before|first|last|at|on|when|if|after|oldest|newest)\b`)
	// sizeRule: "chunks are 512 tokens with 64 overlap": the size of a
	// kind of thing, in its unit.
	sizeRule = mustPattern(`^(?:the\s+|our\s+|all\s+)?[a-z][\w\-]*(?:\s[a-z][\w\-]*)?\s+(?:are|is)\s+(?:at most\s+|at least\s+|up to\s+)?\d[\d,.]*\s*k?\s*(?:tokens|bytes|kb|mb|gb|chars|characters|lines|words|rows|items|px)\b`)
	// holdsNo: "The service worker holds no state between events".
	holdsNo = mustPattern(`^(?:the\s+|our\s+|every\s+|each\s+)?[a-z][\w\-]*(?:\s[a-z][\w\-]*){0,2}\s+(?:holds|keeps|stores|caches|persists|logs|sends|shares)\s+no\s+\w`)
	// alertRule: "alert at 80%", "page someone when the queue passes 1k".
	alertRule = mustPattern(`^(?:and\s+)?(?:alert|warn|page(?:\s+someone)?|notify(?:\s+\w+)?)\s+(?:at|when|if|above|past|over)\s+\S*\d`)
	// onlyWay: "X go through Y only", "nobody runs X by hand".
	onlyWay = mustPattern(`^(?:(?:the\s+|all\s+|our\s+)?[\w\-]+(?:\s+[\w\-]+)?\s+(?:go|goes|happen|happens|run|runs|ship|ships|deploy|deploys|merge|merges)\s+(?:through|via|from|on|in)\s+.{3,60}\s+only|(?:nobody|no one)\s+(?:runs|deploys|pushes|merges|edits|touches|commits|changes|calls|writes|deletes)\s+.{3,60}\s+(?:by hand|manually|directly|in prod|on prod|against prod|in production|from (?:a|their) laptop))$`)
	// notAnOption: words said before "yes" that are no option ("definitely
	// yes", "oh yes").
	notAnOption = mustPattern(`^(?:\w+ly|oh|ah|um|uh|er|hell|heck|yeah|yep|sure|ok|okay|fine|so|and|but|then|well|hmm|mmm|also)$`)
	// replacesForm: "Tempo replaces Jaeger as the backend".
	replacesForm = mustPattern(`^(\S+(?:\s\S+)?)\s+(?:replaces|will replace|is replacing|takes over from)\s+(\S+(?:\s\S+)?)(?:\s+(?:as|for)\s+(?:the\s+|our\s+)?([\w\- ]{2,30}?))?$`)
	// movesTo: "routing moves to OSRM self-hosted".
	movesTo = mustPattern(`^(?:the\s+|our\s+)?([\w\-]+(?:\s[\w\-]+)?)\s+(?:moves|is moving|will move|goes|switches|is switching|will switch|migrates|is migrating)\s+(?:over\s+)?to\s+(.{2,40})$`)
	// enoughChoice: the option that is enough, given as why another went
	// ("drop gRPC, plain HTTP+JSON is enough for 20 req/s").
	enoughChoice = mustPattern(`^((?:plain\s+|just\s+)?.{2,40}?)\s+(?:(?:is|are|'s)\s+(?:enough|plenty|sufficient|all we need)\b|(?:handles|covers|takes care of|does)\s+\S.{0,40}\bfor us\b)`)
	// notNeeded: an option no longer wanted, said as not needing or not
	// paying for it.
	notNeeded = mustPattern(`^(?:(?:we'?re|we are|i'?m)\s+not\s+going\s+to\s+need|we\s+(?:won'?t|will not|don'?t|do not)\s+need|let'?s\s+not\s+(?:pay\s+for|keep\s+paying\s+for|keep|bother\s+with)|we\s+(?:shouldn'?t|should not)\s+(?:pay\s+for|keep))\s+(.+?)(?:\s+(?:at all|anymore|any more|after all|going forward))?$`)
	// itDoes: what the option just chosen does for the user ("It diffs the
	// schema for us."), the reason of that choice.
	itDoes = mustPattern(`^(?:it|that|this|they)\s+(?:diffs|gives|give|handles|handle|saves|save|keeps|keep|avoids|avoid|lets|let|supports|support|covers|cover|scales|scale|generates|generate|removes|remove|cuts|cut|reduces|reduce|solves|solve|comes with|come with|ships with|ship with|does|do)\b`)
	// articleLead: a noun phrase with an article, no option's name ("the
	// cron jobs", "a cron job").
	articleLead = mustPattern(`^(?:the|a|an|our|some)\s`)
	// moveOn: what "move … to" says of going on with the work ("move on
	// to the tests", "move ahead to step 3").
	moveOn = mustPattern(`^(?:on|ahead|forward|along|right)$`)
	// pastedPlaceholder: what an agent's input box shows for a pasted
	// image or block of text ("[Image #1]", "[Pasted text #2 +40 lines]").
	pastedPlaceholder = mustPattern(`\[(?:Image|Pasted text|Pasted image|Pasted)\s*#\d+[^\]\n]{0,40}\]\s*`)
	// useNot: "use CSS grid not flexbox", a choice and the option it is
	// not, with no comma between.
	useNot = mustPattern(`^(?:let'?s\s+|please\s+|we\s+)?(?:use|go with|pick|choose|prefer|stick with|switch to)\s+([\w.+#/\- ]{1,40}?)\s+not\s+([\w.+#/\-]+(?:\s[\w.+#/\-]+){0,2})$`)
	// auxWord: a verb or modal within what precedes " not ", which makes
	// it a clause ("use it if it does not fit").
	auxWord = mustPattern(`\b(?:do|does|did|is|are|was|were|can|could|should|would|will|must|if|when|unless|because|that|it|they)\b`)
	// forPartThen: "for the model itself, LightGBM", "for auth: magic links only".
	forPartThen = mustPattern(`^for\s+((?:the\s+|our\s+)?[\w\-/ ]{2,30}?)(?:\s+itself)?\s*[,:]\s+(.{2,40}?(?:\s+only)?)$`)
	// planFor: "plan for this week: first …, then …".
	planFor = mustPattern(`^plan(?:\s+for\s+[\w ]{2,20})?\s*:\s*(.+)$`)
	// valueShouldBe: "the threshold should be 0.35, not 0.5".
	valueShouldBe = mustPattern(`^(?:the\s+)?([\w\-]+(?:\s+[\w\-]+){0,2})\s+should be\s+(\S+),?\s+not\s+(\S+?)(?:\s+(?:—|–|--|because|since)\s+(.+))?$`)
	// notWorthTried: "the neural net experiment wasn't worth the complexity".
	notWorthTried = mustPattern(`^(?:the\s+|our\s+)?([\w\-/ ]{2,30}?)\s+(?:experiment|spike|prototype|poc|trial|attempt)\s+(?:wasn'?t|was not|isn'?t|is not)\s+worth\s+(.+)$`)
	// belongsRule: "notebooks are for exploration only", "anything that
	// runs on a schedule goes into the package with tests".
	belongsRule = mustPattern(`^(?:(?:the\s+)?[\w\-]+(?:\s+[\w\-]+)?\s+(?:are|is)\s+for\s+.{2,40}\s+only|(?:anything|everything)\s+(?:that\s+)?.{3,60}\s+(?:goes|go|lives|belongs|moves)\s+(?:in|into|to|under)\s+.{3,60})$`)
	// dataRule: rows left out of the data by what they hold.
	dataRule = mustPattern(`\b(?:with|without|older than|newer than|younger than|fewer than|less than|more than|below|above|under|over)\b.*\d|\bfrom (?:the )?(?:training|test|eval|evaluation|validation|holdout) (?:set|data)?`)
	// clauseWord: a word that makes a phrase a clause or a courtesy, not a
	// part or an option ("for the help, go for it").
	clauseWord = mustPattern(`\b(?:it|this|that|them|us|me|you|we|i|is|are|was|were|use|help|go|thanks)\b`)
	// useEverywhere: "use a fixed random seed (42) everywhere".
	useEverywhere = mustPattern(`^use\s+(?:a|an|the)\s+.{3,60}\s+everywhere$`)
	// labelTopic: what a decision label is about, before the decision
	// ("final answer on background jobs: …").
	labelTopic = mustPattern(`^(?:on|about|for|re|regarding)\s+[^:,.]{1,40}:\s+`)
	// optionStays: "Sidekiq stays", "Postgres stays as is".
	optionStays = mustPattern(`^(.{2,30}?)\s+stays(?:\s+as\s+(?:it\s+)?is)?$`)
	// typedFast: words typed fast for what the reader reads ("nvm").
	// Not "u" for "you": a one-letter word is as often a name in code
	// ("u.id"), and a statement keeps the user's words.
	typedFast      = regexp.MustCompile(`(?i)\b(?:nvm|pls|plz|thx)\b`)
	typedFastWords = map[string]string{"nvm": "never mind", "pls": "please", "plz": "please", "thx": "thanks"}
	// optionBack: "React was right", "AWS after all": an option taken
	// back up, with no verb.
	optionBack = mustPattern(`^([\w.+#/\-]+(?:\s[\w.+#/\-]+)?)\s+(?:after all|was right(?: after all)?|was the right (?:call|choice)|is back)$`)
	// bareNot: "pg not mysql", "2 spaces not tabs", "Vitest, not Jest".
	bareNot = mustPattern(`^([\w.+#/\-]+(?:\s[\w.+#/\-]+)?),?\s+not\s+([\w.+#/\-]+(?:\s[\w.+#/\-]+)?)$`)
	// optionOnly: "k8s only".
	optionOnly = mustPattern(`^([\w.+#/\-]+(?:\s[\w.+#/\-]+)?)\s+only$`)
	// arrowForm: "ci = gh actions", "jest -> vitest, <why>".
	arrowForm = mustPattern(`^([\w.+#/\-]+(?:\s[\w.+#/\-]+)?)\s*(?:=|:=|->|=>|→)\s*([\w.+#/\-]+(?:\s[\w.+#/\-]+)?)(?:[,;]\s+(.+))?$`)
	// doFor: "do tf for infra".
	doFor = mustPattern(`^(?:let'?s\s+)?do\s+([\w.+#/\-]+(?:\s[\w.+#/\-]+)?)\s+for\s+(?:the\s+)?([\w\-/]+(?:\s[\w\-/]+)?)$`)
	// keepAfterDrop: what stays, said after what is dropped.
	keepAfterDrop = mustPattern(`^(?:just\s+)?(?:stay|stick|keep|go back|back to|use|go with|stay with|stay on)\b|^(?:we'?ll|we will|let'?s)\s+(?:use|go with|do it in|write it in|build it in|move to|switch to)\b`)
	// hardNo: "hard no on canvas, <why>", "no to GraphQL".
	hardNo = mustPattern(`^(?:a\s+)?(?:hard|big|firm|definite)?\s*no\s+(?:on|to)\s+([\w.+#/\-]+(?:\s[\w.+#/\-]+)?)(?:\s*[,;:—–-]+\s*(.+))?$`)
	// optionYes: "husky yes, but only lint in the hook".
	optionYes = mustPattern(`^([\w.+#/\-]+(?:\s[\w.+#/\-]+)?)\s+yes\b[,.!]?\s*(?:but\s+)?(.+)?$`)
	// onlyIn: "only lint in the hook".
	onlyIn = mustPattern(`^only\s+\w+(?:\s+\w+){0,3}\s+(?:in|on|from|during)\s+(?:the\s+)?[\w\-]+(?:\s+[\w\-]+)?$`)
	// saidNoThenYes: "I said no to Tailwind, but … changed my mind, let's use it".
	saidNoThenYes = mustPattern(`\b(?:i|we)\s+said\s+no\s+to\s+([\w.+#/\-]+)\b.*\b(?:changed my mind|changed our minds)\b.*\b(?:use it|go with it|take it|add it)\b`)
	// selfHost: "let's self-host GlitchTip instead".
	selfHost = mustPattern(`^(?:let'?s\s+|we'?ll\s+|we\s+)?self-?host\s+([\w.+#/\-]+(?:\s[\w.+#/\-]+)?)(\s+instead)?$`)
	// goNever: "outputs go to the analytics schema, never to the
	// production database".
	goNever = mustPattern(`^((?:the\s+|all\s+|our\s+)?[\w\-]+(?:\s+[\w\-]+)?)\s+(go|goes|live|lives|belong|belongs|run|runs|stay|stays|get written|gets written)\s+(to|in|on|into|under)\s+(.{3,60}?),\s+never\s+(to|in|on|into|under)\s+(.{3,60})$`)
	// alwaysEach: "dates are always UTC in the API and ISO 8601 in JSON".
	alwaysEach = mustPattern(`^((?:the\s+|all\s+|our\s+)?[\w\-]+(?:\s+[\w\-]+)?)\s+(are|is)\s+always\s+(.{1,30}?)\s+in\s+(.{2,30}?)\s+and\s+(.{1,30}?)\s+in\s+(.{2,30})$`)
	// amountFor: an amount set for a part ("10 s for the upstream API").
	amountFor = mustPattern(`^(?:and\s+)?\d[\d.,]*\s*(?:[a-z%/]+\s+){0,2}for\s+(?:the\s+|our\s+|all\s+|each\s+|every\s+)?[\w\-/ ]{2,40}$`)
	// propertyRule: what data or a part must be, in a review's words:
	// "PII is encrypted at rest with per-tenant keys", "the audit log is
	// append-only", "TLS 1.2 minimum everywhere", "every admin action
	// lands in the audit log".
	propertyRule = mustPattern(`^(?:(?:the|our|all|every|each)\s+)?[\w\- ]{1,30}?\s+(?:is|are|must be|should be|stays?|remains?)\s+(?:(?:encrypted|signed|redacted|masked|hashed)\s+(?:at rest|in transit|everywhere|before|on)\b|(?:end-to-end|e2e)\s+encrypted\b|(?:append-only|read-only|immutable|write-once)\b)|^[\w.\-+#]{1,20}\s+v?\d[\w.]*\s+(?:minimum|min|or later|or newer|and up)\b|^(?:every|all|each)\s+[\w\- ]{1,30}?\s+(?:lands?|goes|go|is written|are written|is logged|are logged)\s+(?:in|into|to)\s+(?:the\s+)?[\w\-]+`)
	// capAt: "cap the retries at 5", "limit uploads at 50 MB".
	capAt = mustPattern(`^(?:please\s+)?(?:cap|limit|rate-limit|rate limit|throttle|keep)\s+(?:the\s+|our\s+|all\s+)?[\w.\-]+(?:\s+[\w.\-]+){0,3}?\s+(?:at|to)\s+\d[\w.,%/]*(?:\s+[a-z/]+){0,3}?(?:\s+per\s+[a-z]+){0,2}$`)
	// checkOn: a check or mode switched on ("mypy strict mode on for the
	// whole package", "TypeScript strict mode on everywhere").
	checkOn = mustPattern(`^(?:[\w.\-+]+\s+){0,3}?(?:strict(?:\s+mode)?|[\w\-]+\s+mode|[\w\-]+\s+checks?|linting|type[- ]?checking|race detector)\s+(?:on|enabled|turned on|always on)(?:\s+(?:for|in|across)\s+.+|\s+everywhere)?$`)
	// noForThen: "no ORM for the reporting queries, plain SQL with
	// psycopg", "not GraphQL, plain REST", "no GraphQL after all — plain
	// REST": the option turned down, the part, what is used.
	noForThen = mustPattern(`^not?\s+([\w.\-+/]+(?:\s+[\w.\-+/]+)?)(?:\s+for\s+(.{3,40}?))?(?:\s+(?:after all|anymore|any more|either))?(?:,|;|\s+(?:—|–|--))\s+(?:just\s+|use\s+|we\s+use\s+|we'?ll\s+use\s+)?(.{3,60})$`)
	oneOff    = mustPattern(`\b(?:yet|for now|right now|this time|today|tonight|in this pr|for me|(?:for|on|in) (?:this|a|the) (?:branch|fork)(?: only)?|so we can compare)\b`)

	// Reason separators inside a statement.
	// purposeTail: "… to keep costs down", "… to save money": the reason
	// for the choice before it, said as its purpose.
	purposeTail   = mustPattern(`\s+(?:to\s+((?:keep|save|cut|reduce|lower|bring down)\s+(?:costs?|money|the bill|spend|spending|latency)\b.*)|so\s+(?:that\s+)?(we\s+(?:can|could|don'?t|do not|never|won'?t|get|keep|avoid|reuse|ship)\s.*|(?:the|our)\s+[a-z][\w\-]*(?:\s+[a-z][\w\-]*)?\s+(?:can|could|will|won'?t|doesn'?t|does not)\s+[a-z].*|(?:the\s+|our\s+)?[a-z][\w\-]*(?:\s+[a-z][\w\-]*)?\s+(?:comes?\s+for\s+free|stays?|works?|scales?|fits?|loads?|starts?|runs?|compiles?|(?:are|is|remain|remains)\s+(?:reproducible|deterministic|stable|consistent|comparable|repeatable))\b.*))$`)
	reasonSep     = mustPattern(`(?:\s+(?:—|–|--)\s+|,?\s+because(?:\s+of)?\s+|,?\s+since\s+|,?\s+now that\s+|;?\s*reason:\s*|,\s+(?:it'?s|it is|they'?re|as|we need|we want|we don'?t need|we do not need)\s+|,\s+we'?re\s+(?:adding|moving to|switching to|standardi[sz]ing on|migrating to|going to)\s+|,\s+it\s+(?:pulls|adds|breaks|needs|costs|drags|brings|takes|leaks|bloats|slows|doesn'?t|does not|can'?t|won'?t)\b|,\s+(?:one less|one fewer|fewer|less|no more|no extra)\s+)`)
	temporalSince = mustPattern(`^(?:then|yesterday|last|version|v?\d|monday|tuesday|wednesday|thursday|friday|the (?:start|beginning|last|release))`)
	reasonParen   = mustPattern(`^(.+?)\s*\(([^()]{3,})\)$`)
	// betterBut: "Koin is simpler but we already use Dagger", "Fly would be
	// cheaper, but …".
	betterBut = mustPattern(`^(\S+(?:\s\S+)?)\s+(?:is|are|would be|might be|may be|'s|was|were|felt|feels|seemed|seems|looked|looks)\s+(?:\w+\s+)?(?:simpler|easier|nicer|lighter|cleaner|faster|better|cheaper|smaller|newer|tempting|great|nice|good|solid|fine)(?:\s+\w+)?,?\s+but\s+(.{3,})$|^(\S+(?:\s\S+)?)\s+(?:was|is|sounds|sounded|seemed|seems|would be|would have been)\s+(?:(?:a\s+)?(?:nice|good|great|cool|neat|tempting|interesting)\s+(?:idea|thought|option)|the\s+(?:other|obvious|first|runner-up)\s+(?:candidate|option|contender|choice)|the\s+runner-up|(?:also\s+)?(?:considered|in the running|on the table|on the shortlist)),?\s+but\s+(.{3,})$`)
	// everyIs: "Every stream key is single use and expires after 24
	// hours".
	everyIs = mustPattern(`^(?:every|each|all)\s+[\w\-]+(?:\s[\w\-]+)?\s+(?:is|are|must be|should be)\s+(?:single[- ]use|one[- ]time|short[- ]lived|unique per|scoped to|signed|encrypted|immutable|revocable)\b|^(?:every|each|all)\s+[\w\-]+(?:\s[\w\-]+)?\s+(?:expires?|rotates?|is rotated|are rotated)\s+(?:after|every|within)\s+\d`)
	// everyTime: "Thumbnails every 10 seconds, WebP, 320 wide".
	everyTime = mustPattern(`^(?:the\s+)?[\w\-]+(?:\s[\w\-]+)?\s+every\s+\d+\s*(?:s|secs?|seconds?|min|mins|minutes?|hours?|h|days?|frames?)\b`)
	// partFrom: "Captions come from Whisper running on our own GPUs".
	partFrom = mustPattern(`^(?:the\s+|our\s+)?([\w\-]+(?:\s[\w\-]+)?)\s+(?:come|comes|are generated|is generated|are made|is made)\s+(?:from|by|with)\s+([\w.\-+#]+)([^;,]*)(?:[;,]\s*(.*))?$`)
	// (Where secrets or settings come from is a rule: ruledParts.)
	// wrongToDrop: "I was wrong to drop MediaLive".
	wrongToDrop = mustPattern(`^(?:i|we)\s+(?:was|were)\s+wrong\s+to\s+(?:drop|remove|reject|rule out|ditch|kill)\s+([\w.+#/\-]+)(?:[,;]\s+(.+))?$`)
	// roundRule: "Round half to even at the posting level".
	roundRule = mustPattern(`^(?:always\s+)?round\s+(?:half[- ](?:to[- ]even|up|down|away from zero)|up|down|to\s+(?:the\s+)?(?:nearest|\d)|(?:with|using)\s+banker'?s)`)
	// nothingDeleted: "nothing is ever deleted, only reversed".
	nothingDeleted = mustPattern(`^nothing\s+(?:is|gets|will be|may be|can be)\s+(?:ever\s+)?(?:deleted|removed|overwritten|edited|mutated|dropped|purged|updated in place)\b`)
	// forPartWeUse: "for bank feeds we use GoCardless".
	forPartWeUse = mustPattern(`^for\s+(?:the\s+|our\s+)?([\w\-]+(?:\s[\w\-]+){0,2}?),?\s+we(?:'ll| will|'re going to)?\s+(?:use|go with|pick|picked|chose|run)\s+([\w.+#\-]+)(.*)$`)
	// noYetTail: "…, no partitioning yet": an option put aside after
	// whatever comes before.
	fineForBut = mustPattern(`^[\w.+#\-]+\s+(?:is|are)\s+fine\s+for\s+.{2,40}?,?\s+but\s+((?:the\s+)?.{2,40}?)\s+(?:go|goes|run|runs|should go|must go|need|needs|use|uses)\s+(?:through|on|to|via|with)?\s*([\w.+#\-]+)[.!]*$`)
	taskLead   = mustPattern(`^(?:let'?s\s+|we'?ll\s+|just\s+|please\s+)?(?:add|use|keep|build|ship|write|make|create|put|run|start|implement|set up|index)\b`)
	noYetTail  = mustPattern(`,\s+(?:but\s+)?no\s+([\w\-]+(?:\s[\w\-]+)?)\s+(?:yet|for now)[.!]*$`)
	// dataTypeRule: "Amounts are integers in minor units".
	dataTypeRule = mustPattern(`^(?:all\s+|the\s+|our\s+)?[\w\- ]{2,30}?\s+(?:are|is)\s+(?:stored\s+as\s+|kept\s+as\s+|always\s+)?(?:integers?|ints?|bigints?|uuids?|ulids?|decimals?|strings?|cents|minor units|utc|iso[- ]?8601|unix (?:time|timestamps?)|epoch (?:millis|seconds)|si(?:\s+units)?\s+everywhere|utf-8)\b`)
	weTakeThe    = mustPattern(`^we\s+(?:always\s+)?((?:take|use|apply|pick|charge|bill)\s+the\s+.{2,60}?\s+(?:rate|rates|price|prices|value|values|timestamp|date|version|snapshot)\b(?:\s+(?:of|at|from)\s+[^,]{2,40})?)(?:,\s+(?:not|no)\s+([\w\-]+(?:\s[\w\-]+){0,2}))?[.!]*$`)
	// runsWhen: "the 64-rank runs are nightly only".
	runsWhen = mustPattern(`^(?:the\s+)?[\w\-]+(?:\s[\w\-]+){0,3}?\s+(?:are|is|run|runs)\s+(?:nightly|weekly|daily|hourly|monthly|on (?:every )?(?:merge|release|tag|push))(?:\s+only)?[.!]*$`)
	// onlyHappen: "conversions only happen in the input parser".
	onlyHappen = mustPattern(`^(?:the\s+|all\s+)?[\w\-]+(?:\s[\w\-]+)?\s+only\s+(?:happen|happens|run|runs|live|lives|occur|occurs|go|goes)\s+(?:in|on|at|inside|through)\s+\S`)
	// paramsLine: "argon2id params: 64 MiB memory, 3 iterations".
	paramsLine = mustPattern(`^(?:the\s+)?[\w.+#\-]+(?:\s[\w.+#\-]+)?\s+(?:params|parameters|settings|config|configuration|options|limits)\s*:\s*\S.*\d`)
	// insteadImper: "cache the unlocked key in the agent process
	// instead": an instruction said as a change.
	insteadImper = mustPattern(`^(?:just\s+)?(?:use|cache|store|keep|put|run|send|move|call|write|serve|host|build|ship|sync|search|render|log|handle|check|validate|hash|encrypt|sign|derive)\s+.{3,80}?\s+instead$`)
	// durationRule: "15 minute timeout", "clipboard copies clear after 30
	// seconds".
	durationRule = mustPattern(`^\d+[\s-]*(?:ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?)\s+(?:timeout|ttl|expiry|lifetime|grace period|lockout|idle timeout|session|cache)$|\b(?:clear|clears|expire|expires|lock|locks|times? out|wipe|wipes)\s+(?:itself\s+|themselves\s+)?after\s+\d`)
	// onlyEverStores: "the server only ever stores ciphertext blobs".
	onlyEverStores = mustPattern(`^(?:the\s+|our\s+)?[\w\-]+(?:\s[\w\-]+)?\s+only\s+(?:ever\s+)?(?:stores|sees|keeps|holds|gets|receives|knows|handles)\b`)
	// goesThroughWay: "Browser integration goes through native messaging
	// to the CLI": how a part is done, by no named option (goesThrough
	// reads a named one).
	goesThroughWay = mustPattern(`^(?:the\s+|our\s+)?([\w\-]+(?:\s[\w\-]+)?)\s+(?:goes|go|runs|run|talks|talk|is done|are done)\s+(?:through|over|via)\s+([^,;]{2,50})(?:[,;]\s*(.*))?$`)
	// quantityLead: what follows "goes through" is an amount or a thing
	// named elsewhere ("a lot of steps", "the GitHub Actions workflow"),
	// not a way of doing it.
	quantityLead = mustPattern(`^(?:a|an|the|this|that|some|many|several|multiple|lots|all|every|each|\d)\b`)
	// requestBut: a request, then a rule after "but".
	requestBut = mustPattern(`^(?:lmk|let me know|feel free to|go ahead and|you can|ping me|tell me)\b.{3,120}?\s+but\s+((?:don'?t|do not|never|please don'?t|leave)\s)`)
	// agoTail: when an option was dropped, said after it.
	agoTail = mustPattern(`\s+(?:(?:a few|two|three|several|some|many|\d+)\s+)?(?:days?|weeks?|months?|sprints?)\s+ago$|\s+(?:a while|long) ago$|\s+(?:last|this) (?:week|month|sprint|quarter)$|\s+(?:yesterday|earlier|already)$`)
	// itsNow: "it's sqlx with …" after an option dropped.
	itsNow = mustPattern(`^it'?s\s+(?:now\s+|just\s+)?([\w.+#\-]+)\b`)
	// againPronoun: "don't bring it back", "never again" after a
	// turn-down: its emphasis.
	againPronoun = mustPattern(`^(?:and\s+)?(?:(?:don'?t|do not|never)\s+(?:bring|add|suggest|use|put|propose)\s+(?:it|them|that|this)\s+(?:back|again)(?:\s+in)?|never again|not again)[.!]*$`)
	// returnsNever: "handlers return our AppError type, never
	// anyhow::Error across the API boundary".
	returnsNever = mustPattern(`^(?:(?:reminder|remember|note|again|as agreed|fyi)\s*[:,—–-]+\s*)?((?:the\s+|our\s+|all\s+)?[\w\-]+(?:\s[\w\-]+)?\s+(?:return|returns|use|uses|throw|throws|raise|raises|emit|emits|take|takes)\s+.{2,40}?),\s+never\s+([\w:.+#\-<>()]+)(.*)$`)
	// stillBut: "still tracing, but switch the subscriber to …": what
	// stays, then the change.
	stillBut = mustPattern(`^(?:still|keep(?:ing)?|stay(?:ing)? (?:on|with))\s+([\w.+#\-]+),?\s+but\s+(.{3,})$`)
	// butAddDrop: "keep X but add Y" / "but drop Y", read by the keep
	// forms themselves.
	butAddDrop = mustPattern(`^(?:add|drop|ditch|remove|lose|get rid of)\s`)
	// trialWorked / trialFailed: how a try went ("the Polars experiment
	// worked, 6x faster …", "the Litestar spike was a bust, …").
	trialWorked = mustPattern(`^(?:(?:ok|okay|so|alright|well|right)[,.!]?\s+)?(?:the\s+)?([\w.+#\-]+(?:\s[\w.+#\-]+)?)\s+(?:experiment|spike|prototype|trial|poc|branch|migration test)\s+(?:worked|works|paid off|was a success|went well|won)\b[,.;:—–\- ]*(.*)$`)
	trialFailed = mustPattern(`^(?:(?:ok|okay|so|alright|well|right)[,.!]?\s+)?(?:the\s+)?([\w.+#\-]+(?:\s[\w.+#\-]+)?)\s+(?:experiment|spike|prototype|trial|poc|branch)\s+(?:was a bust|was a dead end|failed|flopped|went nowhere|didn'?t (?:pan out|work(?: out)?)|did not (?:pan out|work(?: out)?))\b[,.;:—–\- ]*(.*)$`)
	// wonTrial: "DuckDB won the comparison, switch the reports to it for
	// real".
	wonTrial = mustPattern(`^([\w.+#\-]+)\s+(?:won|wins|won out|came out ahead)(?:\s+(?:in|on))?\s+(?:the\s+|our\s+)?(?:comparison|benchmark|bake-?off|shoot-?out|evaluation|eval|trial|test|experiment)\b[,.;:—–\- ]*(.*)$`)
	// branchLead: what is said for a branch or an experiment only.
	branchLead = mustPattern(`^(?:just\s+)?(?:for|on|in)\s+(?:this|a|the|that)\s+(?:branch|fork|experiment|spike)(?:\s+only)?\b`)
	// staysTail: "Celery stays": what stays, not an option named bare.
	staysTail = mustPattern(`\s(?:stays|remains|stays put|it is|wins|is fine)[.!]*$`)
	// isOutWhy: "poetry is out — the lock step went from 90s to 4s" (isOut
	// reads it without a reason).
	isOutWhy = mustPattern(`^([\w.+#\-]+(?:\s[\w.+#\-]+)?)\s+(?:is|are)\s+out\s*[,;—–-]+\s*(.+)$`)
	// isIn: "uv is in, poetry is out".
	isIn = mustPattern(`^([\w.+#\-]+(?:\s[\w.+#\-]+)?)\s+(?:is|are)\s+in\s*(?:[,;]\s*(.*)|[.!]*)$`)
	// switchToIt: "switch the reports to it for real".
	switchToIt = mustPattern(`(?:switch|move|migrate)\s+(?:the\s+|our\s+)?([\w\-]+(?:\s[\w\-]+)?)\s+(?:over\s+)?to\s+it\b`)
	// iSaid: "no, I said Vitest, not Jest".
	iSaid = mustPattern(`^(?:no+|nope|nah)?[,.!]?\s*(?:i|we)\s+(?:said|meant|asked for|wanted)\s+`)
	// sourceAgrees: "reviewer says gRPC is overkill … and they're right":
	// a judgement reported and taken as the user's own.
	sourceAgrees = mustPattern(`^(?:the\s+|our\s+|my\s+)?(?:reviewer|review|security review|auditor|audit|lead|colleague|teammate|[\w\-]+)\s+(?:says|said|points out|pointed out|thinks|argues)\s+(?:that\s+)?(.{3,120}?),?\s+and\s+(?:they'?re|he'?s|she'?s|it'?s|that'?s|i think they'?re)\s+right(?:[,;]\s*(.*))?$`)
	// lookedAtBut: "We looked at Janus but its plugin model is more than we
	// need": an option weighed and passed over, with why.
	lookedAtBut = mustPattern(`^(?:we|i)\s+(?:also\s+)?(?:looked at|evaluated|considered|checked out|played with|prototyped with|trialled|trialed)\s+([\w.+#/\-]+(?:\s[\w.+#/\-]+)?)\s*,?\s+but\s+(.{3,})$`)
	// keepOut: "keep DASH out of it for now".
	keepOut = mustPattern(`^(?:and\s+)?(?:let'?s\s+|please\s+)?(?:keep|leave)\s+([\w.+#/\-]+(?:\s[\w.+#/\-]+)?)\s+out(?:\s+of\s+(?:it|this|that|the\s+[\w\-]+(?:\s[\w\-]+)?))?(?:\s+(?:for now|entirely|completely|altogether))?$`)
	// leaveLater: "leave DRM for later": a part put off, a rule of scope.
	leaveLater = mustPattern(`^(?:let'?s\s+|we'?ll\s+|please\s+)?(?:leave|keep|push|defer|park|postpone|save)\s+(?:the\s+)?[\w.+#/\-]+(?:\s[\w.+#/\-]+)?\s+(?:for later|for v2|for a later (?:release|version|phase|milestone)|until later|for the next (?:release|version|phase|milestone)|out of (?:v1|the mvp|the first release|scope))\b`)
	// niceButAfter: "We talk MQTT to the broker, CoAP was a nice idea but
	// nobody on the team knows it": a choice, then an option weighed and
	// passed over after its comma.
	niceButAfter = mustPattern(`^(.+?),\s+([\w.+#/\-]+(?:\s[\w.+#/\-]+)?)\s+(?:was|is|sounds|sounded|seemed|seems|would be|would have been)\s+(?:(?:a\s+)?(?:nice|good|great|cool|neat|tempting|interesting|simpler|easier|nicer|lighter|cleaner|faster|better|cheaper|smaller|newer)(?:\s+(?:idea|thought|option))?|the\s+(?:other|obvious|runner-up)\s+(?:candidate|option|contender|choice)|(?:also\s+)?considered),?\s+but\s+(.{3,})$`)
	// followReason: a sentence of its own that gives the reason for the
	// statement before it.
	followReason = mustPattern(`^(?:reason|rationale|why|because|the reason is|that'?s because|this is because)\b[:,]?\s*(.+)$`)
	// soured: "I've been burned by Prisma migrations before", "I looked
	// at the Drizzle output and I don't like it": a judgement of an option
	// by what it did to us, said before the change it explains.
	soured = mustPattern(`\b(?:been burned by|got burned by|been bitten by|had (?:bad experiences?|enough|trouble|problems|issues) with|(?:i'?m|we'?re|i am|we are) not happy with)\s|\b(?:i|we) (?:don'?t|do not) like (?:it|them|that|this|the [\w\-]+)[.!]?$`)
	// optionsNo: options named without a verb, then ", no …".
	optionsNo = mustPattern(`^([\w.\-+/# ]{1,40}?),\s+(?:but\s+)?no\s+(.+)$`)
	// possessiveJudged: "Jest's ESM support is still painful".
	possessiveJudged = mustPattern(`^([\w.\-+/]+)'s\s+[\w\- ]{1,30}?\s+(?:is|are|was|were|keeps?|feels?)\s`)
	// practiceWord: what is ruled out is a way of working ("manual version
	// bumps", "hand-written SQL"), not an option.
	practiceWord = mustPattern(`^(?:manual|manually|hand-written|handwritten|hand-rolled|ad hoc|ad-hoc)\b`)
	// placeWord: a place in a rule ("no secrets in the repo"), which makes
	// "no X" a rule rather than an option turned down.
	placeWord = mustPattern(`\s(?:in|on|at|to|from|into|inside|under|before|after)\s`)
	// fineTail: "at-least-once plus dedup on event_id is fine": what will
	// do instead of an option turned down, however long its name.
	fineTail  = mustPattern(`\s(?:is|are)\s+(?:fine|enough|plenty|good enough|all we need)[.!]?$|\s(?:will do|does the job|do the job)[.!]?$`)
	reasonish = mustPattern(`\b(?:too|costs?|can'?t|cannot|doesn'?t support|lacks|matters|need|needs|so that|cheaper|faster|simpler|slower|safer|easier|harder|better|worse|overkill|not worth|wins|trouble|worth it|a pain|unnecessary|noisy|flaky|heavy|enough|shouldn'?t|should not|mustn'?t|nobody|no one|adds another|adds an extra|hiding|hides|masking|masks|swallowing|swallows|nightmare|a mess|painful|insane|ridiculous|burned|bitten|one more thing|another thing|would kill|kills|archived|deprecated|unmaintained|unsupported)\b`)
	folded    = mustPattern(`^(.+?)(?:,?\s+(?:not|rather than|instead of|over|and not|but not)\s+|,\s+(?:but\s+)?no\s+)(.+?)(?:,?\s+(?:is|are)\s+out)?$`)
	foldedOut = mustPattern(`^(.+?)[,;]\s+(.{1,40}?)\s+(?:is|are)\s+out$`)
	cutOld    = mustPattern(`[,;(]|\s+(?:for|in|on|please|anymore|because|since|as|at)\b|\s+(?:of\s+)?(?:either|both|any kind)$`)
	ideaOf    = mustPattern(`^(?:the idea of\s+)?(?:an?\s+|the\s+)?`)
	// ideaTail: the word that makes an option something said of it ("the
	// Redis idea", "the GraphQL approach"); group 1 is where it begins.
	ideaTail = mustPattern(`^[\w.\-+#/]+(?:\s[\w.\-+#/]+){0,2}(\s+(?:idea|plan|approach|route|option|suggestion|proposal))$`)
)

// unapostrophised: contractions typed without their apostrophe, in the
// forms that lead a statement ("lets use", "dont add", "wont need").
var (
	apostropheless  = []string{"lets", "dont", "wont", "isnt", "doesnt", "shouldnt", "arent", "cant"}
	unapostrophised = regexp.MustCompile(`(?i)\b(?:` + strings.Join(apostropheless, "|") + `)\b`)
)

// partNamed reports whether words (three at most) name a part of the
// product, or a thing of one ("the auth provider").
func partNamed(words string) bool {
	f := strings.Fields(words)
	return len(f) <= 3 && (qualifiedPart(words) || slices.ContainsFunc(f, func(w string) bool { return productParts[w] }))
}

// notGoingTo: "we're not going to use Terraform" (what is put off, "not
// going to do multi-region yet", is not turned down).
var notGoingTo = mustPattern(`^(?:we'?re|we are|i'?m|i am)\s+not\s+going\s+to\s+(?:use|adopt|pick|go with|introduce|target|bother with)\s+(.+)$`)

// changePart: "change the database to MySQL", "let's change the auth
// provider from Auth0 to Clerk": the verb and the part changed.
var changePart = mustPattern(`^(?:(?:let'?s|we'?ll|we will|we should|please)\s+)?(change)\s+(?:the\s+|our\s+)?(.{2,40}?)\s+(?:from\s+.{1,60}?\s+)?to\s+\S`)

// adoptionJudged: an option judged not worth taking, with what takes
// it up ("moving to Kubernetes"), the judgement, and what follows it.
var adoptionJudged = mustPattern(`^(?:(?:honestly|frankly|tbh|imo|i think|i feel like|but|and|so|really|yeah|nah|well)\b,?\s+)*(?:(?:moving|switching|migrating)\s+(?:\w+\s+)?to|adding|using|introducing|bringing in|pulling in|setting up|going with)?\s*(?:the\s+)?((?:[\w.\-+#]+)(?:\s+[\w.\-+#]+){0,2}?)\s+((?:would be|would feel|is|are|seems|feels|sounds)\s+(?:\w+\s+)?(?:overkill|over-?engineered|over-?engineering|unnecessary|not worth it)\b[^,;—–]{0,60}?)\s*(?:[,;—–]\s*(\S.{0,300}))?$`)

// adoptable reports whether the first word of what adoptionJudged
// judges names an option ("Kafka", "date-fns"), not a pronoun or a word
// a sentence opens with ("This", "The").
func adoptable(first string) bool {
	return namedOrPackage(first) && !stopWords[lower(first)]
}

// adoptionWord reports whether low holds a word adoptionJudged needs.
func adoptionWord(low string) bool {
	return strings.Contains(low, "overkill") || strings.Contains(low, "engineer") || strings.Contains(low, "unnecessary") || strings.Contains(low, "not worth it")
}

// readTurn reads a user turn into items, in order.
func readTurn(text string) []item {
	text = unwrapArgs(text)
	// "nvm about fastify": typed-fast words for what the reader knows.
	text = typedFast.ReplaceAllStringFunc(text, func(w string) string { return typedFastWords[lower(w)] })
	if lt := lower(text); slices.ContainsFunc(apostropheless, func(w string) bool { return strings.Contains(lt, w) }) {
		text = unapostrophised.ReplaceAllStringFunc(text, func(w string) string {
			return w[:len(w)-1] + "'" + w[len(w)-1:] // "lets use" → "let's use", "dont" → "don't"
		})
	}
	if lt := lower(fenced.ReplaceAllString(text, "\n")); turnHold.MatchString(lt) && !noUntilTurn.MatchString(lt) {
		return nil // a hold in the user's words, not in code they pasted
	}
	reads := 0
	r := reader{reads: &reads}
	r.lines(userLines(text))
	if len(r.items) == 0 {
		return judgedAlone(text)
	}
	return r.items
}

// judgedAlone reads a turn that only judges an option not worth taking
// ("Moving to Kubernetes would be overkill.", "Honestly Kafka is overkill
// for three events a day"): the option is turned down, for what it is
// judged. Said beside anything else, the judgement is that thing's reason
// or a reply's, and is read so.
func judgedAlone(text string) []item {
	t := strings.TrimSpace(text)
	low := lower(t)
	if len(t) > 200 || strings.ContainsAny(t, "\n?") || !adoptionWord(low) || strings.Contains(strings.TrimRight(t, ".! "), ". ") {
		return nil
	}
	m := adoptionJudged.FindStringSubmatchIndex(strings.TrimRight(low, ".! "))
	if m == nil || m[6] >= 0 || !adoptable(strings.Fields(t[m[2]:m[3]])[0]) {
		return nil
	}
	return []item{{kind: "reject", text: t[m[2]:m[3]], why: strings.TrimRight(t[m[4]:m[5]], ".! ")}}
}

// maxReads bounds the clauses read for one turn (reader.reads): far above
// what a turn a person typed needs (the first 4 000 words of the held-out
// sets' user turns, read as one turn, take 61), it stops a turn made to
// multiply them.
const maxReads = 1 << 15

// unwrapArgs returns the text of a message that is one command-line
// argument in double quotes, unquoted: "opencode run" sends an argument
// that holds a space as "…" with its inner quotes escaped (\"), so the
// user's whole message arrives as one quoted span, which would otherwise
// read as a quotation, not as the user speaking. Any other text (a quote
// inside a message, or several quoted spans) is returned as it is.
func unwrapArgs(text string) string {
	t := strings.TrimSpace(text)
	if len(t) < 2 || t[0] != '"' || t[len(t)-1] != '"' {
		return text
	}
	inner := t[1 : len(t)-1]
	if strings.Count(inner, `"`) != strings.Count(inner, `\"`) {
		return text
	}
	return strings.ReplaceAll(inner, `\"`, `"`)
}

// userLine is one line the user wrote, trimmed, and lower-cased; indent
// is the width of the indentation it had (a nested list item's).
type userLine struct {
	text, low string
	indent    int
}

// userLines removes what is not the user speaking — code, quoted lines,
// quoted spans, pasted output — and returns the remaining lines.
//
// A paste begins at a line that introduces one ("here's the output:", or
// any short line ending in ':' whose next line is output or indented) or
// at a line that is output itself (a command, a log line, a stack frame),
// and runs to the next blank line. The user's own words after it with no
// blank line between are the lines after its last line of output: lines
// that read as a sentence, however technical their words ("raise
// max_conns to 40, the burst at 2am needs it"). A paste introduced as
// such with no output in it (a pasted document) is left out whole.
func userLines(text string) []userLine {
	text = fenced.ReplaceAllString(text, "\n")
	// "[Image #1] this is the layout we want": what the agent's input box
	// put in place of a pasted image or text is not the user's words.
	text = pastedPlaceholder.ReplaceAllString(text, "")
	raw := strings.Split(text, "\n")
	lines := make([]string, 0, len(raw))
	var quote []string
	for _, l := range raw {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, ">") {
			quote = append(quote, strings.TrimLeft(t, "> "))
		} else if len(quote) > 0 && t != "" {
			// "> we could just use Firebase" / "nope, the data stays in
			// Postgres": the "nope" turns down what the quote proposed;
			// it changes nothing the user settled before.
			if m := quoteAnswer.FindStringIndex(lower(t)); m != nil {
				l = t[m[1]:]
				if named := quotedOptions(strings.Join(quote, " "), l); len(named) > 0 && len(named) <= 2 {
					lines = append(lines, "Rejected: "+strings.Join(named, ", "), "")
				}
			}
			quote = nil
		}
		lines = append(lines, markdownLine(l))
	}
	var out []userLine
	keep := func(raw string) {
		l := strings.TrimSpace(spans(raw))
		out = append(out, userLine{text: l, low: lower(l), indent: len(raw) - len(strings.TrimLeft(raw, " \t"))})
	}
	for i := 0; i < len(lines); {
		low := lower(strings.TrimSpace(lines[i]))
		if low == "" {
			out = append(out, userLine{})
			i++
			continue
		}
		intro, document := pasteStart(lines, i)
		if !intro && !outputRaw(lines[i]) {
			keep(lines[i])
			i++
			continue
		}
		from := i
		if intro {
			from = i + 1
		}
		end := from
		for end < len(lines) && strings.TrimSpace(lines[end]) != "" {
			end++
		}
		own := end
		for own > from && ownLine(lines[own-1]) {
			own--
		}
		if own == from && document {
			own = end // a pasted document: no output to end it
		}
		for _, raw := range lines[own:end] {
			keep(raw)
		}
		i = end
	}
	return out
}

// quotedOptions returns the options a quote names that the answer to it
// does not, as the quote spells them.
func quotedOptions(quote, answer string) []string {
	mine := choices(answer)
	var out []string
	for i, raw := range strings.Fields(quote) {
		if isChoiceWord(raw, i == 0) {
			if o := bare(raw); !slices.Contains(mine, lower(o)) && !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	return out
}

// spans removes inline code that holds code (kept: a name in backticks)
// and quoted spans from a line the user wrote.
func spans(l string) string {
	l = inlineCode.ReplaceAllStringFunc(l, func(s string) string {
		if strings.ContainsAny(s[1:len(s)-1], " :=(){};") {
			return " "
		}
		return s[1 : len(s)-1]
	})
	return quoted.ReplaceAllString(l, " ")
}

// pasteStart reports whether line i introduces a paste on the lines after
// it, and whether the introduction says so itself (pasteIntro: what
// follows may be a document rather than output).
func pasteStart(lines []string, i int) (intro, document bool) {
	low := lower(strings.TrimSpace(lines[i]))
	if !strings.HasSuffix(low, ":") || labelRe.MatchString(low) || planLabel.MatchString(low) {
		return false, false
	}
	if pasteIntro.MatchString(low) {
		return true, true
	}
	if len(strings.Fields(low)) > 6 {
		return false, false
	}
	if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) == "" {
		return false, false
	}
	return outputRaw(lines[i+1]) || indented(lines[i+1]), false
}

// indented reports a line indented as pasted or quoted text is (four
// spaces or a tab), not a list item.
func indented(raw string) bool {
	return (strings.HasPrefix(raw, "    ") || strings.HasPrefix(raw, "\t")) && !listItem.MatchString(raw)
}

// outputRaw reports whether a line is program output or a command rather
// than something the user wrote: a log or test line (outputLine), a
// bracketed timestamp or signal, a stack frame or a file:line position, a
// chain of "a: b: c" error prefixes, an exception's name, columns aligned
// with runs of spaces or dot leaders, a number alone, a diff or plan line,
// a shell command.
func outputRaw(raw string) bool {
	t := strings.TrimSpace(raw)
	if t == "" {
		return false
	}
	low := lower(t)
	// The unanchored shapes are tried only where their literal is: every
	// line of every user turn passes here.
	return outputLine.MatchString(low) || outputShape.MatchString(low) || errorChain(low) || command(low) ||
		strings.Contains(low, "....") || strings.HasSuffix(low, "(...)") ||
		(strings.Contains(t, "   ") || strings.Contains(t, "\t")) && columns.MatchString(t) ||
		strings.IndexByte(low, ':') > 0 && filePos.MatchString(low) ||
		strings.Contains(low, "line ") && pyFrame.MatchString(low)
}

// errorChain reports a line of "a: b: c" error prefixes. A paragraph with
// a few labels ("New project: …. Stack: …. Keep it simple: …") has
// sentence ends between them; a line of six labels or more is a chain
// whatever it holds.
func errorChain(low string) bool {
	n := strings.Count(low, ": ")
	return n >= 6 || n >= 3 && !strings.Contains(low, ". ")
}

// command reports a shell command line: a tool's name and nothing but
// arguments, of which at least one reads as one (a flag, a path, a file,
// an assignment) unless there are at most two ("npm audit", "terraform
// plan"); "docker is banned here" is a sentence.
func command(low string) bool {
	m := commandLine.FindStringIndex(low)
	if m == nil {
		return false
	}
	args := strings.Fields(low[m[1]:])
	argLike := len(args) <= 2
	for _, a := range args {
		if a == "|" || a == "&&" {
			continue
		}
		if !argToken.MatchString(a) {
			return false
		}
		argLike = argLike || strings.HasPrefix(a, "-") || strings.ContainsAny(a, "/=") || strings.Contains(strings.TrimRight(a, ".:"), ".")
	}
	return argLike
}

var (
	outputShape = mustPattern(`^(?:\[[^\]]*\d[^\]]*\]|\[signal |goroutine \d+|traceback|exception|[a-z]*(?:error|exception):\s|plan: \d+ to add|[-+]{3} |@@ |\d[\d.,:/]*\s*[a-z%]{0,3}$)`)
	filePos     = mustPattern(`\b[\w./-]+\.(?:go|py|js|ts|tsx|jsx|rb|rs|java|kt|c|cc|cpp|h|cs|php|swift|sql|ya?ml|json|toml):\d+`)
	pyFrame     = mustPattern(`\bline \d+, in \w`)
	columns     = mustPattern(`\S {3,}\S|\S\t+\S`)
	commandLine = mustPattern(`^(?:npm|npx|yarn|pnpm|pip3?|poetry|cargo|kubectl|terraform|helm|docker(?: compose)?|git|grep|rg|curl|wget|psql|mysql|redis-cli|rabbitmqctl|aws|gcloud|k6|pytest|go (?:test|vet|build|run|mod|get|install|generate|tool))(?:\s|$)`)
	argToken    = mustPattern(`^[-\w./:=*@~"]+$`)
)

// ownLine reports whether a line after output reads as the user's own
// sentence: two words or more, most of them words (whatever technical
// names, numbers with units or underscores they hold), none of a log
// line's shape, not indented, not a short "name: value" line (which is
// the program's even when it reads "Decision: use squash merges": a
// commit message git printed).
func ownLine(raw string) bool {
	if indented(raw) || outputRaw(raw) {
		return false
	}
	low := lower(strings.TrimSpace(raw))
	if strings.ContainsAny(low, "[]{}=<>|") || keyValue.MatchString(low) {
		return false
	}
	f := strings.Fields(low)
	if len(f) < 2 {
		return false
	}
	words, plain := 0, 0
	for _, w := range f {
		if strings.ContainsAny(w, "()") || !strings.ContainsFunc(w, unicode.IsLetter) {
			continue
		}
		words++
		if plainWord.MatchString(w) {
			plain++
		}
	}
	return plain >= 2 && words*4 >= len(f)*3
}

// keyValue: a short "name: value" line, as dashboards and tools print.
var keyValue = mustPattern(`^[a-z][\w .-]{0,30}:\s+\S[^:]{0,30}$`)

var plainWord = mustPattern(`^[a-z][a-z'’\-]*[.,;:!?]?$`)

type reader struct {
	// changed: an earlier sentence of the turn dropped an option ("Mongo is
	// out."), so a bare choice after it is its replacement.
	changed bool
	items   []item
	last    []int // the items of the previous sentence, for a following reason
	// pendingWhy: a judgement said before anything of the turn was
	// settled ("Prisma's migrations keep fighting us."), for the change
	// that follows it.
	pendingWhy string
	// prevText and prevEmpty: the sentence before, and whether it settled
	// nothing ("dagster schedules in UTC." before "always.").
	prevText  string
	prevEmpty bool
	// whyNext: the sentence before named an option and no reason ("not
	// Jenkins. Buildkite."), so a plain statement after it is its reason.
	whyNext bool
	// probe: this reader only finds out whether a clause settles
	// anything (yields); the forms that ask that of their own clauses
	// are not tried, so that asking costs one reading, never a reading
	// per way of splitting the clause again.
	probe bool
	// asked: an option the sentence before only named, as a question
	// ("Mongo?"), for a one-word answer after it ("no.").
	asked string
	// reads counts the clauses read for the turn (statement), probes
	// included, up to maxReads; nil: not counted.
	reads *int
	// intro: the label line over the list being read ("updated the
	// spec:"), lower-cased; "" after a blank line.
	intro string
	// inLabel: the text being read is a label's (labelOf).
	inLabel bool
	// lastItems: the items of the line before, for a nested list item
	// that gives their reason.
	lastItems []int
	// stressed: the sentence ended in an emphasis ("…, no exceptions"),
	// taken off before it was read.
	stressed bool
}

func (r *reader) add(it item) {
	it.text = tidy(it.text)
	if it.kind == "reject" {
		if loc := forNowTail.FindStringIndex(lower(it.text)); loc != nil && loc[0] > 0 {
			it.text = it.text[:loc[0]] // "no Redis yet": Redis
		}
		it.text = trimAnySuffix(it.text, " either", " as well", " too", " again") // "we don't ship an MV2 build either", "don't use RabbitMQ again"
		if t, ok := strings.CutPrefix(it.text, "more "); ok && t != "" {
			it.text = t // "No more GraphQL"
		}
		if opt, why, ok := strings.Cut(it.text, ": "); ok && it.why == "" && len(strings.Fields(opt)) <= 4 && (isNamed(opt) || bareOption(opt)) {
			it.text, it.why = opt, why // "not S3: egress is free …"
		}
		if loc := agoTail.FindStringIndex(lower(it.text)); loc != nil && loc[0] > 0 {
			it.text = it.text[:loc[0]] // "we dropped Diesel weeks ago": Diesel
		}
	}
	if it.kind == "decision" && !strings.Contains(it.text, " ") && bareOption(it.text) {
		it.text = "Use " + it.text // "fastify instead"
	}
	if it.kind != "plan" && (it.text == "" || len(it.text) > 300) {
		return
	}
	r.items = append(r.items, it)
	r.last = append(r.last, len(r.items)-1)
}

// enoughInstead adds, after the rejects of a drop (items from n on), the
// option their reason says is enough as their replacement: "drop gRPC,
// plain HTTP+JSON is enough for 20 req/s".
func (r *reader) enoughInstead(n int) {
	for i := n; i < len(r.items); i++ {
		it := r.items[i]
		if it.kind != "reject" || it.why == "" {
			continue
		}
		if m := enoughChoice.FindStringSubmatchIndex(lower(it.why)); m != nil && isNamed(it.why[m[2]:m[3]]) && hasChoice(it.why[m[2]:m[3]]) &&
			!pronounLead.MatchString(lower(it.why)) && !articleLead.MatchString(lower(it.why)) {
			r.add(item{kind: "decision", text: "Use " + it.why[m[2]:m[3]], why: it.why, old: it.text, change: true})
			return
		}
	}
}

// lines reads the turn line by line; a label line ending in ":" opens a
// list whose items follow on their own lines.
func (r *reader) lines(ls []userLine) {
	var list string // label kind of an open list
	var steps []string
	closeList := func() {
		if list == "plan" && len(steps) > 0 {
			r.add(item{kind: "plan", steps: steps})
		}
		list, steps = "", nil
	}
	prev := len(r.items)
	for _, ul := range ls {
		l, low := ul.text, ul.low
		r.lastItems = r.lastItems[:0]
		for i := prev; i < len(r.items); i++ {
			r.lastItems = append(r.lastItems, i)
		}
		prev = len(r.items)
		if list != "" {
			if m := listItem.FindStringSubmatch(l); m != nil {
				body := strings.TrimRight(m[1], ".;")
				open := strings.HasPrefix(body, "[ ] ")
				switch {
				case list == "plan":
					steps = append(steps, strings.TrimPrefix(body, "[ ] "))
				case list == "open" || open:
				case ul.indent > 0 && r.reason(body):
				default:
					r.last = nil
					r.listItem(list, body)
				}
				continue
			}
			closeList()
		}
		if l == "" {
			r.intro = ""
			continue
		}
		li := listItem.FindStringSubmatchIndex(l) // the line as a list item
		switch {
		case li != nil:
			// Each item of a list is said on its own: no reason, option
			// or judgement carries over from the item before.
			r.last, r.whyNext, r.pendingWhy, r.asked = nil, false, "", ""
		case strings.HasSuffix(low, ":"):
			r.intro = low // what the items after it are
		}
		if pm := planLabel.FindStringSubmatchIndex(low); pm != nil {
			body := strings.TrimSpace(l[pm[2]:pm[3]])
			if body == "" {
				list = "plan" // the steps follow as a list
				continue
			}
			if steps := thenSteps(body); len(steps) >= 2 {
				r.last = nil
				r.add(item{kind: "plan", steps: steps})
				continue
			}
			if len(enumInner.FindAllStringIndex(body, -1)) >= 2 {
				r.last = nil
				r.add(item{kind: "plan", steps: splitEnum(body)}) // "Plan: 1) schema 2) handlers"
				continue
			}
			if strings.HasPrefix(low, "to") {
				continue // "TODO: use lodash here": one task, nothing settled
			}
		}
		m := labelRe.FindStringSubmatchIndex(low)
		if m != nil && strings.TrimSpace(low[m[4]:m[5]]) == "" && strings.HasSuffix(strings.TrimSpace(l), ":") {
			if k := labelKind(low[m[2]:m[3]]); k == "constraint" || k == "reject" || k == "plan" || k == "decision" {
				list = k
				continue
			}
		}
		if m == nil && strings.HasSuffix(low, ":") {
			if k := listLabel(low); k != "" {
				list = k // "## Decisions", "Open questions:"
				continue
			}
		}
		if li != nil && strings.HasPrefix(l[li[2]:], "[ ] ") {
			continue // an open box: not settled
		}
		t, isLabelled := labelled{}, false
		if m == nil {
			t, isLabelled = r.labelOf(l, low)
		}
		if isLabelled && r.labelFirst(t) {
			continue
		}
		sub := ul.indent > 0
		if sub && li != nil && r.reason(l[li[2]:li[3]]) {
			continue
		}
		// A labelled list item is read by its label first ("- Auth: go
		// with Keycloak, not our own JWT"); a line of prose whole first
		// ("image uploads: presigned S3 URLs, the API never touches the
		// bytes").
		n := len(r.items)
		if isLabelled && li != nil && r.labelBody(t, sub) {
			if settles(r.items[n:]) {
				continue
			}
			// "- Runtime: Bun, not Node": the label names what the bare
			// choice is for; the line read whole says so.
			k := len(r.items)
			r.labelledLine(l, low, m)
			r.items = append(r.items[:k], slices.DeleteFunc(r.items[k:], func(it item) bool {
				return slices.ContainsFunc(r.items[n:k], func(o item) bool { return o.kind == it.kind && o.text == it.text })
			})...)
			continue
		}
		r.labelledLine(l, low, m)
		if isLabelled && li == nil && len(r.items) == n {
			r.labelBody(t, sub)
		}
	}
	closeList()
}

// reason gives the items of the line before a nested list item as their
// reason ("- primary keys: UUIDv7" over "  - sortable, no coordination
// between services") when they have none and it does not begin as a
// choice does ("  - no Redis", "  - use the replica").
func (r *reader) reason(body string) bool {
	if len(r.lastItems) == 0 || decisionLead.MatchString(lower(body)) {
		return false
	}
	for _, i := range r.lastItems {
		if r.items[i].why != "" || r.items[i].kind == "plan" {
			return false
		}
	}
	for _, i := range r.lastItems {
		r.items[i].why = strings.TrimRight(body, ". ")
	}
	return true
}

// matchIf is p's submatch of s where a cheap look at s (ok) says it may
// match: every sentence, and every clause read within one, passes here.
func matchIf(ok bool, p *pattern, s string) []int {
	if !ok {
		return nil
	}
	return p.FindStringSubmatchIndex(s)
}

// hereWord reports a text ending in a word hereTail takes off.
func hereWord(low string) bool {
	return strings.HasSuffix(low, " here") || strings.HasSuffix(low, " one") || strings.HasSuffix(low, " time") ||
		strings.HasSuffix(low, " project") || strings.HasSuffix(low, " repo")
}

// briefLead reports a text beginning with one of briefVerb's verbs.
func briefLead(low string) bool {
	return strings.HasPrefix(low, "build ") || strings.HasPrefix(low, "run ") || strings.HasPrefix(low, "expose ") || strings.HasPrefix(low, "emit ")
}

// settles reports whether items settle a choice or a rule (more than
// turning options down).
func settles(items []item) bool {
	return slices.ContainsFunc(items, func(it item) bool { return it.kind == "decision" || it.kind == "constraint" })
}

// listLabel returns the kind of the items a label line ending in ':'
// introduces: "decision" ("## Decisions", "DB decisions:", "What we
// agreed:"), "open" ("Open questions:", "Still open:", "Parking lot:"),
// or "" for any other.
func listLabel(low string) string {
	switch f := strings.Fields(strings.TrimSuffix(low, ":")); {
	case len(f) == 0 || len(f) > 5:
		return ""
	case openLabel.MatchString(low):
		return "open"
	case decisionList.MatchString(low):
		return "decision"
	}
	return ""
}

var (
	decisionList = mustPattern(`\b(?:decisions|decided|agreed|settled|choices|(?:tech|stack|architecture) choices)\s*:$`)
	openLabel    = mustPattern(`^(?:(?:still |remaining )?open(?: questions?| points?| items?| issues?)?|questions?|undecided|tbd|to (?:discuss|decide)|parking lot|parked|ideas?|maybe(?: later)?|later|not (?:yet )?decided|unsure|unresolved)\s*:`)
	// topicLabel: "Auth: go with OIDC", "rate limit: 100 req/min" — a
	// short name of what the words after it settle.
	topicLabel = mustPattern(`^([a-z][a-z0-9 /&+.'-]{0,30}?)\s*:\s+(\S.*)$`)
	// descriptive: labels over words that describe, ask or report rather
	// than settle; the line is read whole, as any other.
	descriptive  = mustPattern(`(?:^|\s)(?:error|exception|failure|warning|bug|issue|problem|trace|stack ?trace|panic)$|^(?:notes?|nb|context|fyi|background|summary|status|update|bug|issue|problem|error|warning|result|results|output|example|e\.g|observation|findings?|symptoms?|repro|expected|actual|current|currently|before|after|log|info|tip|hint|heads up|reminder|ps|p\.s|edit|re|subject|title|description|goals?|objective|feedback|q|a|http|https|step \d+|phase \d+|day \d+|v\d[\w.]*)$`)
	okTail       = mustPattern(`\b(?:is|are)\s+(?:fine|plenty|good enough|ok|okay)\b`)
	useHereLead  = mustPattern(`^(?:use|go with|switch to|let'?s use|let'?s go with|we'?ll use|stick with)\s`)
	hereTail     = mustPattern(`\s+(?:here|in here|for this one|this time|on this project|in this project|in this repo)$`)
	triedJudged  = mustPattern(`^(?:we|i)(?:'ve)? (?:tried|used) ([\w.\-+/]+(?: [\w.\-+/]+)?) (?:on|in|at|for|with) .{1,50}? and (?:it|they) (?:was|were)\s+(.+)$`)
	judgedWord   = mustPattern(`\b(?:painful|slow|awful|terrible|a mess|a nightmare|flaky|buggy|broken|unreliable|clunky|bloated|overkill|too \w+|simpler|easier|faster|cheaper|better|worse|enough|fine)\b`)
	goingToSay   = mustPattern(`^(?:i was going to|i was about to|i'?d have) (?:say|suggest|go with|pick|use) ([\w.\-+/]+(?: [\w.\-+/]+)?)(?: here)?,? but (?:honestly,? |actually,? |really,? )?(.+)$`)
	suggestedBut = mustPattern(`^(?:the assistant|you|the agent|claude) suggested ([\w.\-+/]+(?: [\w.\-+/]+)?)(?: earlier| before)?,? but (?:that'?s|it'?s|that is|it is) (.+)$`)
	ignoreSaid   = mustPattern(`\bignore what i (?:said|wrote)(?: (?:earlier|before|yesterday|last time))? about ([\w.\-+/]+)`)
	allIn        = mustPattern(`^(?:let'?s\s+|we\s+|we'?ll\s+|please\s+)?(?:keep|do|write|put|build)\s+(?:everything|it all|all of it|the whole thing|all of this)\s+in\s+([\w+#\-]+(?:\.[\w]+)?)[.!]*$`)
	pinTo        = mustPattern(`^(?:we\s+|we'?ll\s+|let'?s\s+|always\s+|please\s+)?(pin\s+(?:the\s+|our\s+)?(.{2,40}?)\s+(?:to|at)\s+(?:release\s+|version\s+|v)?\d[\w.\-]*)`)
	pinRule      = mustPattern(`^(?:always\s+)?pin (?:every|all|each|the) .+ to (?:an? )?(?:exact|fixed|specific|single) (?:version|versions|release|tag|digest|sha)`)
	keepAlive    = mustPattern(`^(?:but |and |please )?keep (?:the |our |all )?.{2,40}? (?:alive|running|around|in place|working|online)(?: until .+)?$`)
	keepSame     = mustPattern(`^(?:but |and |please )?keep (?:the |our |all )?.{2,40}? (?:identical|unchanged|as it is|as is|the same|intact|byte-for-byte identical)\b`)
	runsOn       = mustPattern(`^(?:it|this|the app|the service|everything|all of it) (?:has to|must|needs to|should|will have to) (?:run|live|be deployed|be hosted) (?:on|in) .+`)
	briefVerb    = mustPattern(`^(?:build (?:the |our |a |an )?.{2,40}? with|run (?:it|this|them|the \w+) as|expose|emit) (.+)$`)
	stackIntro   = mustPattern(`^(?:(?:ok|okay|alright|right|so)[ ,]+)*(?:for (?:this|the|our) (?:project|app|repo|service|codebase|mvp|prototype)\s*:|(?:the |our )?(?:tech )?stack (?:is|will be)(?: going to be)?:?)\s+`)
	stackLabel   = mustPattern(`^(?:(?:the |our )?(?:tech )?stack|tech|tooling|tools|libraries|libs|frameworks|infra|infrastructure|hosting|database|db|auth|styling|state|navigation|testing|tests|ci|deploy|deployment|queue|cache|storage|logging|monitoring|frontend|backend|runtime|language|orm)$`)
	negPart      = mustPattern(`^(?:no|not|never|without)\s`)
	partLead     = mustPattern(`^(?:the|this|that|these|those|it|its|we|i|you|they|there|see|check|look|please|see)\b`)
	negLead      = mustPattern(`^(?:no|never|don'?t|do not|avoid) \S+.*,\s*(?:no|never|nor)\s`)
	ruleLead     = mustPattern(`^(?i:but|and|please)\s+`)
	rejectAdverb = mustPattern(`\s+(?:everywhere|entirely|completely|altogether|for good|across the board)[.!]*$`)
	planIs       = mustPattern(`^(?:(?:right|ok|okay|alright|so|well)\s+)*(?:the|our) plan is(?: to| that)?\s+(.+)$`)
	plusOne      = mustPattern(`^\+1\s+(?:on|for|to)\s+(.+?)(?:,?\s+(?:keep it|let'?s keep it|ship it|go with it|use it))?$`)
	// tagQuestion: a statement checked with a word ("…, ok?"), not a fact
	// asked about ("we're on Postgres, right?").
	tagQuestion = mustPattern(`(?i),\s*(?:ok|okay|yeah|alright|cool|sound good|sounds good|agreed)\s*\?+$`)
	// bestFitThenIt: "Redis seems like the best fit, let's go with it".
	bestFitThenIt = mustPattern(`^(.{1,40}?)\s+(?:seems|looks|sounds|is)\s+(?:like\s+)?(?:the\s+)?(?:best|right|better|cleanest|simplest|safest)\s+(?:fit|option|choice|bet|call|one)\b[^,]*,\s+(?:so\s+)?(?:let'?s|we'?ll|i'?ll)\s+(?:go with|use|pick|take)\s+(?:it|that|this|that one|this one)$`)
	standardise   = mustPattern(`^(?:we'?re |we are |let'?s |we'?ll |we will )?standardi[sz](?:e|ing)\s+on\s+(.+?)(?:\s+(?:now|from now on|going forward))?$`)
	nameShouldBe  = mustPattern(`^(?:the\s+)?((?:[\w\-]+\s+){0,2}(?:name|prefix|suffix|title|label|flag|env var|variable))\s+should be\s+(\S+)(?:,?\s+not\s+(\S+))?$`)
	reviewHedge   = mustPattern(`^(?:suggestion|thought|idea|optional|consider|could)(?:\s*\((?:non-)?blocking\))?\s*:`)
	quoteAnswer   = mustPattern(`^(?:no|nope|nah|i disagree|disagree|not really|hard no)\b[,.!:;—–-]*\s*`)
	decisionLead  = mustPattern(`^(?:use|using|switch|move|go with|pick|keep|drop|no|not|never|always|don'?t|do not|avoid|prefer|stick|stay|add|remove|replace|put|run|make|only)\b`)
	// pronounRule: a rule about "it" alone ("don't act on it") says
	// nothing a capsule could keep.
	pronounRule = mustPattern(`^(?:please\s+)?(?:don'?t|do not|never)\s+(?:\w+\s+){0,2}(?:it|this|that|them|these|those)[.!]*$`)
	// specIntro: a line introducing a list of settings ("updated the
	// spec:", "## Stack"), whose "name: value" items set things; under any
	// other ("Environment:", "Current numbers:") they report them.
	specIntro   = mustPattern(`\b(?:spec|specs|specification|requirements?|settings?|config|configuration|decisions?|decided|choices|answers?|feedback|changes|conventions?|rules?|defaults|approach|stack|architecture|design|setup we want|the plan|agreed)\b`)
	verbInLabel = mustPattern(`\b(?:is|are|was|were|be|been|must|should|will|would|can|could|may|might|reads|says|said|wrote|asks|asked|do|does|did|has|have|had|means|looks|seems|sounds|goes|went|got|gets|wants|needs)\b`)
	reasonLabel = mustPattern(`^(?:reason|reasons|why|rationale|because|motivation)$`)
	noAnswer    = mustPattern(`^(?:no|nope|none|nah|not needed|not now|never|skip(?: it)?)(?:[.!]+\s*|$)(.*)$`)
)

// labelled is a line under a short label of its own ("**Auth:** go with
// OIDC via Keycloak", "- primary keys: UUIDv7", "Reason: …"): the label
// as written (name) and lower-cased, what follows it, and whether the
// line is a list item.
type labelled struct {
	name, label, body string
	listed            bool
}

// labelOf returns the label of a line, or false for a line with none, or
// with one that describes, reports or is a known label of its own; and
// false inside a label's text: labels do not nest, and reading each
// label's text again would read a chain of them quadratically.
func (r *reader) labelOf(l, low string) (labelled, bool) {
	if r.inLabel {
		return labelled{}, false
	}
	listed := false
	if lm := listItem.FindStringSubmatchIndex(l); lm != nil {
		l, low, listed = l[lm[2]:lm[3]], low[lm[2]:lm[3]], true
	}
	m := matchIf(strings.Contains(low, ": "), topicLabel, low)
	if m == nil {
		return labelled{}, false
	}
	label := strings.TrimSpace(low[m[2]:m[3]])
	if len(strings.Fields(label)) > 4 || descriptive.MatchString(label) || verbInLabel.MatchString(label) ||
		settledLabel.MatchString(low) || interjection.MatchString(low) || pasteIntro.MatchString(low) {
		return labelled{}, false
	}
	return labelled{name: strings.TrimSpace(l[m[2]:m[3]]), label: label, body: strings.TrimSpace(l[m[4]:m[5]]), listed: listed}, true
}

// readLabelled reads text as a label's: no label within it is one.
func (r *reader) readLabelled(text string) {
	r.inLabel = true
	defer func() { r.inLabel = false }()
	r.line(text)
}

// labelFirst reads what a label says before its line is read whole: a
// label of an open question drops the line, a reason label gives the
// item before its reason, a framing label over what is turned down
// ("Keep it simple: no microservices, no Redux") reads only that, and
// "no" turns the labelled thing down ("soft deletes: no. hard delete +
// audit table"). It reports whether it read the line.
func (r *reader) labelFirst(t labelled) bool {
	switch {
	case openLabel.MatchString(t.label + ":"):
		return true
	case reasonLabel.MatchString(t.label):
		if last := r.last; len(last) > 0 && r.items[last[len(last)-1]].why == "" {
			r.items[last[len(last)-1]].why = strings.TrimRight(t.body, ". ")
			return true
		}
	}
	lb := lower(t.body)
	if negLead.MatchString(lb) {
		n := len(r.items)
		r.readLabelled(t.body)
		return len(r.items) > n
	}
	nm := noAnswer.FindStringSubmatchIndex(lb)
	if nm == nil {
		return false
	}
	r.last = nil
	rest := strings.TrimSpace(t.body[nm[2]:nm[3]])
	if rest != "" && (reasonish.MatchString(lower(rest)) || okTail.MatchString(lower(rest))) && !r.yields(rest) {
		// "caching: no. the read replica is fast enough"
		r.add(item{kind: "reject", text: t.name, why: strings.TrimRight(rest, ". ")})
		return true
	}
	r.add(item{kind: "reject", text: t.name})
	if rest != "" {
		k := len(r.items)
		r.readLabelled(rest)
		if len(r.items) == k && len(strings.Fields(rest)) <= 6 && !strings.HasSuffix(rest, "?") {
			// "no. hard delete + audit table": what is done instead
			r.add(item{kind: "decision", text: capitalise(strings.TrimRight(rest, ". "))})
		}
	}
	return true
}

// labelBody reads what follows a label on its own, for a line that read
// whole settles nothing (or a list item, read by its label first): a
// stack listed after its label is one choice a part; a bare choice before
// what it turns down is the labelled thing's ("- Package manager: uv, not
// Poetry"); and a short value is the setting of the labelled thing, where
// the line is an item (or nested under one) of a list that introduces
// settings. sub: the line is nested under a list item. It reports whether
// it settled anything.
func (r *reader) labelBody(t labelled, sub bool) bool {
	n := len(r.items)
	if first, _, _ := strings.Cut(t.body, ", "); stackLabel.MatchString(t.label) && strings.Contains(t.body, ", ") && !decisionLead.MatchString(lower(first)) && !goWith.MatchString(lower(first)) {
		// "Stack: Next.js 15 with the app router, Postgres via Drizzle,
		// auth through Google Workspace (no email/password)"
		parts := strings.Split(strings.TrimRight(t.body, ". "), ", ")
		if last := len(parts) - 1; last > 0 {
			// "…, Prisma and Postgres": the last two, joined.
			if a, b, ok := strings.Cut(trimAny(parts[last], "and "), " and "); ok && hasChoice(a) && hasChoice(b) {
				parts = append(parts[:last], a, b)
			}
		}
		for _, part := range parts {
			if part = strings.TrimSpace(trimAny(part, "and ", "plus ")); part != "" {
				k := len(r.items)
				r.readLabelled(part)
				if len(r.items) == k && hasChoice(part) && !partLead.MatchString(lower(part)) && !negPart.MatchString(lower(part)) {
					r.decision(item{kind: "decision", text: "Use " + part})
				}
			}
		}
		if len(r.items) > n {
			return true
		}
	}
	r.readLabelled(t.body)
	item0 := t.listed || sub
	if head, _, ok := strings.Cut(t.body, ", "); ok && item0 && len(r.items) > n && !settles(r.items[n:]) &&
		len(strings.Fields(head)) <= 3 && !strings.ContainsAny(head, "?[]{}()=<>") && !decisionLead.MatchString(lower(head)) {
		r.add(item{kind: "decision", text: capitalise(t.name) + ": " + head})
	}
	if len(r.items) > n {
		return true
	}
	if item0 && specIntro.MatchString(r.intro) && len(strings.Fields(t.body)) <= 4 && !strings.ContainsAny(t.body, "?[]{}()=<>") {
		r.last = nil
		r.add(item{kind: "decision", text: capitalise(t.name) + ": " + strings.TrimRight(t.body, ". ")})
		return true
	}
	return false
}

// thenSteps splits "first X, then Y, then Z" (or "X, then Y and finally
// Z") into its steps; nil when body is not such a sequence.
func thenSteps(body string) []string {
	body = strings.TrimRight(strings.TrimSpace(body), ".")
	parts := thenSep.Split(body, -1)
	if len(parts) < 2 {
		return nil
	}
	steps := make([]string, 0, len(parts))
	for i, p := range parts {
		if i == 0 {
			p = strings.TrimPrefix(p, "first ")
			p = strings.TrimPrefix(p, "First ")
		}
		if p = strings.TrimSpace(p); p != "" {
			steps = append(steps, p)
		}
	}
	return steps
}

// listItem records one item of a labelled list.
func (r *reader) listItem(kind, body string) {
	switch kind {
	case "decision":
		t, ok := r.labelOf(body, lower(body))
		switch {
		case ok && r.labelFirst(t):
		case r.yields(body):
			r.line(body) // "- no nginx" under "Decided:"
		default:
			r.line("Decision: " + body)
		}
	case "constraint":
		r.add(item{kind: "constraint", text: body})
	case "reject":
		r.rejectList(body)
	}
}

// line reads one line: an enumerated label ("Rules: 1) … 2) …") or
// sentences.
func (r *reader) line(l string) {
	low := lower(l)
	r.labelledLine(l, low, labelRe.FindStringSubmatchIndex(low))
}

// labelledLine is line given l lower-cased and labelRe's match in it (nil:
// none).
func (r *reader) labelledLine(l, low string, m []int) {
	if m != nil {
		k := labelKind(low[m[2]:m[3]])
		body := l[m[4]:m[5]]
		if (k == "constraint" || k == "plan") && len(enumInner.FindAllStringIndex(body, -1)) >= 2 {
			parts := splitEnum(body)
			rest := ""
			// The last item ends at the first sentence end; the rest is read
			// as sentences.
			if n := len(parts); n > 0 {
				if loc := sentenceEnd.FindStringIndex(parts[n-1]); loc != nil {
					rest = parts[n-1][loc[1]:]
					parts[n-1] = parts[n-1][:loc[0]]
				}
			}
			r.last = nil
			if k == "plan" {
				r.add(item{kind: "plan", steps: parts})
			} else {
				for _, p := range parts {
					r.add(item{kind: "constraint", text: p})
				}
			}
			if rest != "" {
				r.line(rest)
			}
			return
		}
	}
	unread := "" // the sentence before, when it settled nothing and found fault with an option
	for _, s := range sentences(l) {
		n := len(r.items)
		for _, c := range runOn(s) {
			for _, d := range dashDecision(c) {
				r.sentence(d)
			}
		}
		if len(r.items) == n+1 && unread != "" {
			// "SQS has no priorities. Let's do Redis streams instead": the
			// fault found is why the change is made, and names what it
			// replaces.
			if it := &r.items[n]; it.kind == "decision" && it.change && it.why == "" && it.old == "" {
				it.why = unread
			}
		}
		unread = ""
		if t := strings.TrimSpace(s); len(r.items) == n && len(t) <= 120 && !strings.Contains(t, "?") {
			if loc := interjection.FindStringIndex(lower(t)); loc != nil && loc[1] < len(t) {
				t = t[loc[1]:]
			}
			if lt := lower(t); isNamed(firstWord(t)) && faultWord.MatchString(lt) {
				unread = strings.TrimRight(t, ".! ")
			}
		}
	}
}

// faultWord: a sentence that finds fault with what it names ("SQS has no
// priorities", "Mongo can't do joins").
var faultWord = mustPattern(`\b(?:has no|have no|doesn'?t have|does not have|doesn'?t support|does not support|lacks|can'?t|cannot|won'?t|isn'?t|is not|is too|are too|too slow|too expensive|keeps? (?:breaking|failing|crashing))\b`)

// dashDecision splits "we tried Prisma and it was painful — use Drizzle
// here" before the dash: what follows it is what is settled, not the
// reason of what precedes it.
func dashDecision(s string) []string {
	if !strings.ContainsAny(s, "—–-") {
		return []string{s}
	}
	m := dashThenVerb.FindStringSubmatchIndex(s)
	if m == nil || m[0] == 0 {
		return []string{s}
	}
	return []string{s[:m[0]], s[m[2]:]}
}

// dashThenVerb: a dash, then (group 1) a clause that settles a choice.
var dashThenVerb = mustPattern(`\s+(?:—|–|--)\s+((?:so\s+|just\s+|but\s+)?(?:use|switch to|go with|let'?s use|let'?s go with|we'?ll use|stick with|keep|pick)\s)`)

// runOn splits a sentence said without punctuation, as dictation or fast
// typing gives it, at the words that begin another thought ("… because we
// need joins and also dont touch the auth package", "lets go with NATS
// for the events actually no make it Kafka"); a sentence with its own
// commas or semicolons is left whole. "actually no", "no wait" stay with
// the clause they begin: they mark it a change.
func runOn(s string) []string {
	if strings.ContainsAny(s, ",;:—–") || len(s) < 50 {
		return []string{s}
	}
	change := false
	if m := runOnLead.FindStringIndex(s); m != nil {
		s, change = s[m[1]:], true // "no wait dont use redis …"
	}
	// "make it Kafka we already run a Kafka cluster": the reason, said
	// as one.
	s = runOnWhy.ReplaceAllString(s, " because $1 ")
	var out []string
	at := 0
	clause := func(c string) {
		if change {
			c = "Actually, " + c // the change marker, as the reader knows it
		}
		out = append(out, c)
	}
	for _, m := range runOnSeam.re.FindAllStringSubmatchIndex(s, -1) {
		if m[0] <= at {
			continue
		}
		clause(s[at:m[0]])
		at, change = m[1], m[2] >= 0
		if m[4] >= 0 {
			at = m[4] // "just do it in memory", "it should listen on the queue"
		}
	}
	clause(s[at:])
	return out
}

var (
	runOnSeam = mustPattern(`(?i)\s+(?:and also|oh and|and oh|(?:and )?one more thing|(?:and )?while you'?re (?:at it|in there)|(actually,? no|no wait|wait,? no|scratch that)|(just (?:do|use|go with|put|keep|make|run|store|write)|it (?:should|must|needs to|has to)|so (?:drop|remove|ditch|kill)))\s+`)
	runOnLead = mustPattern(`(?i)^(?:yeah,? no|no wait|wait,? no|actually,? no)\s+`)
	runOnWhy  = mustPattern(`(?i)\s+(we already|we only have|we don'?t have|it'?s owned|its owned)\s+`)
)

// maxSentence bounds the bytes of a sentence the reader looks into.
const maxSentence = 800

var sentenceEnd = mustPattern(`[.!?]+(?:\s+|$)`)

// sentences splits a line at sentence ends, keeping a question mark with
// its sentence; "e.g." and "i.e." do not end one.
func sentences(l string) []string {
	var out []string
	start := 0
	for _, loc := range sentenceEnd.FindAllStringIndex(l, -1) {
		end := loc[1]
		prev := lower(l[max(0, loc[0]-4):loc[0]])
		if strings.HasSuffix(prev, "e.g") || strings.HasSuffix(prev, "i.e") || strings.HasSuffix(prev, " vs") || strings.HasSuffix(prev, "etc") {
			continue
		}
		if s := strings.TrimSpace(l[start:end]); s != "" {
			out = append(out, s)
		}
		start = end
	}
	if s := strings.TrimSpace(l[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// splitEnum splits "1) a 2) b" / "(a) x (b) y" into items.
func splitEnum(body string) []string {
	var out []string
	locs := enumInner.FindAllStringIndex(body, -1)
	for i, loc := range locs {
		end := len(body)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		if p := strings.TrimRight(strings.TrimSpace(body[loc[1]:end]), ",;"); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func labelKind(label string) string {
	switch {
	case strings.Contains(label, "plan") && !strings.HasPrefix(label, "change"):
		return "plan"
	case strings.Contains(label, "decision") && !strings.HasPrefix(label, "change"), strings.Contains(label, "decided"),
		strings.HasPrefix(label, "final answer"), label == "final call", label == "verdict":
		return "decision"
	case strings.HasPrefix(label, "change"), label == "correction", label == "scratch that", label == "on second thought", label == "on reflection", label == "on second thoughts", label == "thinking about it more", strings.Contains(label, "changed my mind"):
		return "change"
	case strings.HasPrefix(label, "rejected"), label == "ruled out", label == "vetoed", label == "not doing":
		return "reject"
	}
	return "constraint"
}

// sentence reads one sentence.
func (r *reader) sentence(s string) {
	if r.reads != nil && *r.reads > maxReads {
		return // past the turn's readings, no sentence is looked into
	}
	prevLast := r.last
	r.last = nil
	s = strings.TrimSpace(strings.Trim(s, "\"'“”*_ "))
	s = strings.TrimLeft(s, "-•> ")
	if s == "" || len(s) > maxSentence {
		// Nobody settles a choice in a sentence of a page: such a run of
		// text is pasted, and reading its clauses one within another
		// would cost the square of its length.
		return
	}
	asked := r.asked
	r.asked = ""
	if loc := tagQuestion.FindStringIndex(s); loc != nil && loc[0] > 0 {
		s = s[:loc[0]] // "Let's use Postgres, ok?": said, and checked with the agent
	}
	if strings.HasSuffix(s, "?") {
		if o := strings.TrimRight(s, "? "); bareOption(o) {
			r.asked = o // "Mongo? no."
		}
		return
	}
	low := lower(s)
	if m := matchIf(strings.Contains(low, " about "), forgetAbout, strings.TrimRight(low, ".! ")); m != nil && !hedge.MatchString(low) {
		// "forget what I said about tabs": every rule about it goes,
		// whether it kept something out or asked for it (what "said"
		// would otherwise mark as reported speech).
		r.add(item{kind: "lift", text: s[m[2]:m[3]], about: true})
		return
	}
	if loc := dashSep.FindStringIndex(s); loc != nil && loc[0] > 0 {
		// "Stripe's fees are too high for us — move payments to Paddle":
		// the judgement, then the change, as after a comma.
		if before, after := low[:loc[0]], low[loc[1]:]; judgement.MatchString(before) && namesKnown(s[:loc[0]]) && !reasonLead.MatchString(after) && (switchTo.MatchString(after) || movesTo.MatchString(after) || useImper.MatchString(after)) {
			s = trimAny(s[:loc[0]], "and ", "but ", "so ") + ", " + s[loc[1]:]
			low = lower(s)
		}
	}
	if m := matchIf(strings.Contains(low, "change "), changePart, low); m != nil && partNamed(low[m[4]:m[5]]) {
		// "Change the database to MySQL": a part of the product switched,
		// said with "change" ("change the function name to parseConfig"
		// is an edit, not a choice).
		s = s[:m[2]] + "switch" + s[m[3]:]
		low = lower(s)
	}
	if m := iSaid.FindStringIndex(low); m != nil && isChoiceWord(firstWord(s[m[1]:]), false) {
		// "no, I said Vitest, not Jest": the user's own choice, said
		// again as a correction, not reported speech.
		s, low = capitalise(s[m[1]:]), low[m[1]:]
		if head, _, _ := strings.Cut(s, ","); bareOption(head) {
			s, low = "Use "+s, "use "+low // "I said Vitest, not Jest"
		}
	}
	if branchLead.MatchString(low) {
		return // "for this branch only, use DuckDB for the reports so we can compare": a try
	}
	if m := matchIf(strings.Contains(low, " won") || strings.Contains(low, " wins"), wonTrial, low); m != nil && isChoiceWord(s[m[2]:m[3]], false) {
		text := "Use " + s[m[2]:m[3]]
		if p := switchToIt.FindStringSubmatch(low[m[4]:]); p != nil {
			text += " for the " + strings.TrimPrefix(p[1], "the ") // "switch the reports to it"
		}
		r.decision(item{kind: "decision", text: text, why: strings.TrimRight(s[:m[4]], ",.;:—–- "), change: true}) // "DuckDB won the comparison"
		return
	}
	if m := matchIf(strings.Contains(low, "worked") || strings.Contains(low, "works") || strings.Contains(low, "paid off") || strings.Contains(low, "success") || strings.Contains(low, "went well") || strings.Contains(low, " won"), trialWorked, low); m != nil && isChoiceWord(firstWord(s[m[2]:m[3]]), false) {
		// "ok the Polars experiment worked, 6x faster on the monthly
		// rollup": the option tried is kept, for what it showed.
		r.decision(item{kind: "decision", text: "Use " + s[m[2]:m[3]], why: strings.TrimRight(s[m[4]:m[5]], ". "), change: true})
		return
	}
	if m := trialFailed.FindStringSubmatchIndex(low); m != nil && isChoiceWord(firstWord(s[m[2]:m[3]]), false) {
		// "the Litestar spike was a bust, …": the option tried is turned
		// down.
		r.add(item{kind: "reject", text: s[m[2]:m[3]], why: strings.TrimRight(s[m[4]:m[5]], ". ")})
		return
	}
	if m := matchIf(strings.Contains(low, " out"), isOutWhy, low); m != nil && (isNamed(s[m[2]:m[3]]) || bareOption(s[m[2]:m[3]])) && !interjection.MatchString(low) {
		r.add(item{kind: "reject", text: s[m[2]:m[3]], why: strings.TrimRight(s[m[4]:m[5]], ". ")})
		return
	}
	if m := matchIf(strings.Contains(low, " in"), isIn, low); m != nil && (isNamed(s[m[2]:m[3]]) || bareOption(s[m[2]:m[3]])) && !interjection.MatchString(low) {
		// "uv is in, poetry is out — …"
		r.decision(item{kind: "decision", text: "Use " + s[m[2]:m[3]], change: true})
		if m[4] >= 0 {
			r.sentence(s[m[4]:m[5]])
		}
		return
	}
	if len(r.items) > 0 && againPronoun.MatchString(low) {
		return // "we dropped Diesel …. don't bring it back"
	}
	if m := matchIf(strings.Contains(low, ", never "), returnsNever, low); m != nil && (isChoiceWord(bare(s[m[4]:m[5]]), false) || strings.Contains(s[m[4]:m[5]], "::")) {
		r.add(item{kind: "constraint", text: capitalise(s[m[2]:m[3]])})
		r.add(item{kind: "reject", text: s[m[4]:m[5]]})
		return
	}
	if m := matchIf(strings.Contains(low, " but "), stillBut, low); m != nil && !stopWords[low[m[2]:m[3]]] && !butAddDrop.MatchString(low[m[4]:]) {
		// "still tracing, but switch the subscriber to OpenTelemetry
		// export": the change is read; what stays is not in question.
		r.sentence(capitalise(s[m[4]:m[5]]))
		return
	}
	if m := matchIf(strings.Contains(low, " but "), requestBut, low); m != nil {
		// "lmk if the auth middleware needs changes but don't touch the
		// session cookie settings, …": the request is none; the rule is.
		r.sentence(capitalise(s[m[1]-len(low[m[2]:m[1]]):]))
		return
	}
	if m := matchIf(strings.Contains(low, " right"), sourceAgrees, low); m != nil {
		// "reviewer says gRPC is overkill for three endpoints and they're
		// right, plain HTTPS with JSON": the judgement, the user's own.
		said := capitalise(s[m[2]:m[3]])
		if m[4] >= 0 {
			said += ", " + s[m[4]:m[5]]
		}
		s, low = said, lower(said)
	}
	if m := wrongAbout.FindStringSubmatchIndex(low); m != nil {
		// "I was wrong about clap, …", "undo the indicatif change, …": the
		// option dropped, said as a mistake undone.
		g := 2
		if m[2] < 0 {
			g = 4
		}
		if opt := s[m[g]:m[g+1]]; hasChoice(opt) || isNamed(opt) {
			s = "Drop " + opt + s[m[6]:m[7]]
			low = lower(s)
		}
	}
	if pronounRule.MatchString(low) || strings.Contains(low, ":") && reviewHedge.MatchString(low) {
		return // "suggestion (non-blocking): extract …": offered, not settled
	}
	// "Deploys go through the GitHub Actions workflow only — nobody runs
	// fly deploy by hand": a second rule after the dash, not a reason;
	// "Revert the auth change — back to server-side sessions": the change.
	// "earlier I said no to Tailwind, but … I changed my mind, let's use
	// it": an option turned down before, taken.
	if m := matchIf(strings.Contains(low, "said no to"), saidNoThenYes, low); m != nil && isChoiceWord(firstWord(s[m[2]:m[3]]), false) {
		r.decision(item{kind: "decision", text: "Use " + s[m[2]:m[3]], change: true})
		return
	}
	if i := strings.Index(s, ", "); i > 0 && len(r.items) == 0 && (judgement.MatchString(low[:i]) || soured.MatchString(low[:i])) && namesKnown(s[:i]) && hasChoice(s[i+2:]) && r.readsAlone(s[i+2:]) {
		// "celery's retry semantics bit us twice with duplicate postings,
		// moving jobs to Procrastinate on Postgres": the complaint, then
		// the change it explains.
		r.sentence(s[:i])
		r.sentence(s[i+2:])
		return
	}
	if i := strings.Index(s, ", "); i > 0 && strings.Contains(low, " worth") && notWorthTried.MatchString(strings.TrimRight(low[i+2:], ". ")) {
		// "Let's stay with LightGBM, the neural net experiment wasn't worth
		// the complexity": what was tried is turned down on its own.
		r.sentence(s[:i])
		r.sentence(capitalise(strings.TrimSpace(s[i+2:])))
		return
	}
	// "Passwords are hashed with argon2id": how a part is done, by a
	// well-known option, is that option chosen.
	if m := matchIf(strings.Contains(low, " with "), doneWith, low); m != nil && isNamed(strings.Trim(s[m[2]:m[3]], ".,")) {
		r.decision(item{kind: "decision", text: capitalise(s)})
		return
	}
	// "homebrew stays, but add a Scoop manifest for Windows": what stays
	// is said again; what follows the "but" is the news.
	if m := matchIf(strings.Contains(low, " but "), staysBut, low); m != nil && (m[2] < 0 && m[6] >= 0 || m[2] >= 0 && (isNamed(firstWord(s[m[2]:m[3]])) || hasChoice(s[m[2]:m[3]]))) {
		if m[2] < 0 { // "keep stripe but add PayPal …"
			m = []int{m[0], m[1], m[6], m[7], m[8], m[9]}
		}
		rest, n := strings.TrimRight(strings.TrimSpace(s[m[4]:m[5]]), ".! "), len(r.items)
		r.statement(capitalise(rest), r.changed)
		if len(r.items) == n && hasChoice(rest) && !pronounLead.MatchString(lower(rest)) {
			// "…, but NDJSON when --stream is passed", "…, but add a
			// Scoop manifest for Windows": the option the change adds.
			if lr := lower(rest); !strings.HasPrefix(lr, "add ") && !strings.HasPrefix(lr, "use ") {
				rest = "Use " + rest
			}
			r.decision(item{kind: "decision", text: capitalise(rest)})
		}
		return
	}
	// "no framer motion, it's 30 KB for two fades. plain CSS transitions":
	// what is used instead of the option just turned down.
	if m := matchIf(len(prevLast) > 0, plainInstead, low); (m != nil && hasChoice(s) || len(prevLast) > 0 && plainOn.MatchString(low)) &&
		slices.ContainsFunc(prevLast, func(i int) bool { return r.items[i].kind == "reject" }) {
		r.decision(item{kind: "decision", text: "Use " + strings.TrimRight(s, ".! ")})
		return
	}
	// "Dark mode through CSS variables, no ThemeProvider": a part and the
	// option it is done through, with no verb.
	if m := matchIf(strings.Contains(low, " through ") || strings.Contains(low, " via "), partThrough, low); m != nil && isNamed(s[m[4]:m[5]]) && !stopWords[lower(firstWord(s))] &&
		!throughVerb.MatchString(low[m[2]:m[3]]) && !hasChoice(s[m[2]:m[3]]) && !slices.ContainsFunc(strings.Fields(low[m[4]:m[5]]), func(w string) bool { return stopWords[w] }) {
		r.decision(item{kind: "decision", text: "Use " + strings.TrimRight(s[m[4]:m[5]], ".") + " for " + lower(s[m[2]:m[3]])})
		if m[6] >= 0 && nobodyWants.MatchString(low[m[6]:m[7]]) {
			r.statement(capitalise(s[m[6]:m[7]]), false) // an option turned down, not the choice's reason
		} else if m[6] >= 0 {
			r.sentence(capitalise(s[m[6]:m[7]]))
		}
		return
	}
	// "Use Redis — never Memcached", "Use Redis, never Memcached, it bit
	// us before": the choice, and an option ruled out for good. "never"
	// before a practice ("…, never floats") stays a rule.
	if m := matchIf(strings.Contains(low, "never "), neverOption, low); m != nil && (bareOption(s[m[4]:m[5]]) || m[2] >= 0 && len(strings.Fields(s[m[4]:m[5]])) == 1 && isNamed(s[m[4]:m[5]])) {
		n := len(r.items)
		if m[2] >= 0 {
			r.sentence(s[m[2]:m[3]])
		}
		if m[2] < 0 || len(r.items) > n || hasChoice(s[m[2]:m[3]]) {
			why := ""
			if m[6] >= 0 {
				why = strings.TrimRight(s[m[6]:m[7]], ". ")
			}
			r.add(item{kind: "reject", text: strings.TrimRight(s[m[4]:m[5]], ".! "), why: why})
			return
		}
	}
	// "We'll support passkeys, with TOTP as the fallback": a second
	// choice, for the role it is given.
	if m := matchIf(strings.Contains(low, " as "), withAsRole, low); m != nil && isNamed(s[m[4]:m[5]]) {
		if r.readFirst(s[m[2]:m[3]]) {
			r.decision(item{kind: "decision", text: "Use " + s[m[4]:m[5]] + " as the " + s[m[6]:m[7]]})
			return
		}
	}
	if m := matchIf(strings.Contains(low, " but "), niceButAfter, low); m != nil && bareOption(s[m[4]:m[5]]) {
		n := len(r.items)
		if r.readFirst(s[m[2]:m[3]]) && slices.ContainsFunc(r.items[n:], func(it item) bool { return it.kind == "decision" }) {
			r.add(item{kind: "reject", text: s[m[4]:m[5]], why: strings.TrimPrefix(strings.TrimRight(s[m[6]:m[7]], ". "), "because ")})
			return
		}
	}
	// "Releases go through fastlane, nobody uploads a build by hand",
	// "we go with SwiftUI, UIKit only where SwiftUI can't do it": a choice,
	// then a rule after the comma — when the first part settles something.
	if m := matchIf(strings.Contains(low, ", "), ruleAfterComma, low); m != nil && (m[4] < 0 || isNamed(s[m[4]:m[5]])) {
		if r.readFirst(s[m[2]:m[3]]) {
			rule := capitalise(strings.TrimRight(strings.TrimSpace(s[m[3]+1:]), ". "))
			if m[4] >= 0 {
				r.add(item{kind: "constraint", text: rule}) // not the choice's reason
			} else {
				r.sentence(rule)
			}
			return
		}
	}
	if i := strings.Index(s, " — "); i > 0 && (ruleAfterDash.MatchString(low[i+len(" — "):]) || fallbackRule.MatchString(low[i+len(" — "):]) || imperativeRule.MatchString(low[i+len(" — "):]) || strings.HasPrefix(low[i+len(" — "):], "back to ")) {
		r.sentence(s[:i])
		r.sentence(capitalise(strings.TrimSpace(s[i+len(" — "):])))
		return
	}
	// "we tried Prisma on the last project and it was painful"
	if m := matchIf(strings.Contains(low, "tried ") || strings.Contains(low, "used "), triedJudged, low); m != nil && isChoiceWord(firstWord(s[m[2]:m[3]]), false) && judgedWord.MatchString(low[m[4]:m[5]]) {
		r.add(item{kind: "reject", text: s[m[2]:m[3]], why: "it was " + strings.TrimRight(s[m[4]:m[5]], ". ")})
		return
	}
	// "ok so for this project: Next.js, Prisma, and Postgres", "the stack
	// is Next.js, Prisma and Postgres": the stack, listed.
	if loc := stackIntro.FindStringIndex(low); loc != nil && strings.ContainsAny(s[loc[1]:], ",+") {
		s = "Stack: " + s[loc[1]:]
		low = lower(s)
	}
	// "… for tracking loans. Stack: Next.js 15, Postgres via Drizzle." and
	// "Keep it simple: no microservices, no Redux." inside a paragraph.
	if t, ok := r.labelOf(s, low); ok && (stackLabel.MatchString(t.label) || negLead.MatchString(lower(t.body))) {
		n := len(r.items)
		if r.labelFirst(t); len(r.items) > n || r.labelBody(t, false) {
			return
		}
	}
	// "for bank feeds we use GoCardless (the old Nordigen API), Plaid
	// doesn't cover half our EU banks"
	if m := matchIf(strings.HasPrefix(low, "for "), forPartWeUse, low); m != nil && (isNamed(s[m[4]:m[5]]) || bareOption(s[m[4]:m[5]])) {
		opt, rest := s[m[4]:m[5]], s[m[6]:m[7]]
		if w := firstWord(rest); w != "" && isChoiceWord(w, false) && !strings.ContainsAny(w, ",.;") {
			opt, rest = opt+" "+w, strings.TrimPrefix(strings.TrimLeft(rest, " "), w) // "we use Shaka Player"
		}
		purpose := ""
		if loc := purposeTail.FindStringIndex(lower(rest)); loc != nil {
			// "… so the same kernels run on CUDA and HIP"
			rest, purpose = rest[:loc[0]], strings.TrimSpace(rest[loc[0]:])
		}
		n := len(r.items)
		r.decisionBody("Use "+opt+" for "+low[m[2]:m[3]]+rest, r.changed)
		r.attach(seq(n, len(r.items)), strings.TrimRight(purpose, ". "))
		return
	}
	// "add a composite index on (account_id, posted_at) and keep it at
	// that, no partitioning yet": what is put aside, after a task that
	// names no option.
	if m := matchIf(strings.Contains(low, " no "), noYetTail, low); m != nil && taskLead.MatchString(low) && !hasChoice(s[:m[0]]) && !stopWords[low[m[2]:m[3]]] && !strings.Contains(low[:m[0]], ", no ") {
		r.add(item{kind: "reject", text: s[m[2]:m[3]]})
		return
	}
	// "Amounts are integers in minor units, never floats, and every
	// amount carries its ISO currency code": a rule of the data's type,
	// then another.
	if hasDataType(low) && dataTypeRule.MatchString(low) && !describes.MatchString(low) && !alwaysEach.MatchString(low) {
		head, rest := beforeAnd(s), ""
		if len(head) < len(s) {
			rest = s[len(head)+len(", and "):]
		}
		if h, more, ok := strings.Cut(head, "; "); ok {
			head, rest = h, more // "…; conversions only happen in the input parser"
		}
		r.add(item{kind: "constraint", text: capitalise(head)})
		if rest != "" {
			r.statement(rest, false)
		}
		return
	}
	// "we take the ECB reference rate of the transaction date, no
	// intraday rates": which figure is used, a rule; what is not, turned
	// down.
	if m := matchIf(strings.HasPrefix(low, "we "), weTakeThe, low); m != nil {
		r.add(item{kind: "constraint", text: capitalise(s[m[2]:m[3]])})
		if m[4] >= 0 {
			r.add(item{kind: "reject", text: s[m[4]:m[5]]})
		}
		return
	}
	// "Eigen is fine for the small dense blocks but the big sparse solves
	// go through PETSc": the option kept for one part, another for the
	// other part.
	if m := matchIf(strings.Contains(low, " but "), fineForBut, low); m != nil && (isNamed(s[m[4]:m[5]]) || bareOption(s[m[4]:m[5]])) {
		r.decision(item{kind: "decision", text: "Use " + s[m[4]:m[5]] + " for " + s[m[2]:m[3]]})
		return
	}
	// "argon2id params: 64 MiB memory, 3 iterations, never lower on
	// mobile either": settings of an option, one rule.
	if strings.Contains(low, ":") && paramsLine.MatchString(low) {
		r.add(item{kind: "constraint", text: capitalise(s)})
		return
	}
	// "Browser integration goes through native messaging to the CLI, no
	// extension talks to the server directly"
	if m := matchIf(strings.Contains(low, " through ") || strings.Contains(low, " over ") || strings.Contains(low, " via "), goesThroughWay, low); m != nil && productPart(low[m[2]:m[3]]) && !isChoiceWord(firstWord(s[m[4]:m[5]]), false) && !quantityLead.MatchString(low[m[4]:m[5]]) && !describes.MatchString(low) {
		r.decision(item{kind: "decision", text: "Use " + s[m[4]:m[5]] + " for " + low[m[2]:m[3]], change: r.changed})
		if m[6] >= 0 {
			r.statement(s[m[6]:m[7]], false)
		}
		return
	}
	// "leave DRM for later": a part put off, not an option turned down.
	if (strings.Contains(low, "later") || strings.Contains(low, " v2") || strings.Contains(low, " next ") || strings.Contains(low, "out of ")) && leaveLater.MatchString(low) {
		r.add(item{kind: "constraint", text: capitalise(s)})
		return
	}
	// "Captions come from Whisper running on our own GPUs": the part is
	// made by a well-known option.
	if m := matchIf(strings.Contains(low, " from ") || strings.Contains(low, " by ") || strings.Contains(low, " with "), partFrom, low); m != nil && productPart(low[m[2]:m[3]]) && !ruledParts[lastWord(low[m[2]:m[3]])] && categoryOf[low[m[4]:m[5]]] != "" {
		r.decision(item{kind: "decision", text: "Use " + s[m[4]:m[5]] + strings.TrimRight(s[m[6]:m[7]], ". ") + " for " + low[m[2]:m[3]], change: r.changed})
		if m[8] >= 0 {
			r.statement(s[m[8]:m[9]], false) // "…; no third-party captioning service sees the audio"
		}
		return
	}
	// "I was wrong to drop MediaLive": an option dropped, taken again.
	if m := matchIf(strings.Contains(low, "wrong to "), wrongToDrop, low); m != nil && (isNamed(s[m[2]:m[3]]) || bareOption(s[m[2]:m[3]])) {
		why := ""
		if m[4] >= 0 {
			why = strings.TrimRight(s[m[4]:m[5]], ". ")
		}
		// (Still active, it is said again, not changed: stays.)
		r.decision(item{kind: "decision", text: "Use " + s[m[2]:m[3]], why: why, change: true, stays: true})
		return
	}

	// "Keep everything in Nextflow": one option for all of it.
	if m := matchIf(strings.Contains(low, " in "), allIn, low); m != nil && categoryOf[low[m[2]:m[3]]] != "" {
		r.decision(item{kind: "decision", text: "Use " + s[m[2]:m[3]] + " for everything", change: r.changed})
		return
	}
	// "Pin every dependency to an exact version, no caret ranges",
	// "keep the old endpoint alive until the mobile app is updated"
	if (strings.HasPrefix(low, "pin ") || strings.HasPrefix(low, "always pin ")) && pinRule.MatchString(low) ||
		strings.Contains(low, "keep ") && (keepAlive.MatchString(low) || keepSame.MatchString(low)) ||
		strings.Contains(low, " run ") && runsOn.MatchString(low) {
		r.add(item{kind: "constraint", text: capitalise(strings.TrimRight(ruleLead.ReplaceAllString(s, ""), ". "))})
		return
	}
	// "We pin the VEP cache to release 110": a version held, and the
	// option it is a version of, used.
	if m := matchIf(strings.Contains(low, "pin "), pinTo, low); m != nil {
		for _, raw := range strings.Fields(s[m[4]:m[5]]) {
			if categoryOf[lower(bare(raw))] != "" {
				r.decision(item{kind: "decision", text: "Use " + bare(raw)})
				break
			}
		}
		r.add(item{kind: "constraint", text: capitalise(s[m[2]:m[3]])})
		return
	}
	// "The assistant suggested Kafka earlier, but that's overkill"
	if m := matchIf(strings.Contains(low, "suggested "), suggestedBut, low); m != nil && isChoiceWord(firstWord(s[m[2]:m[3]]), false) {
		opt := strings.TrimSuffix(strings.TrimSuffix(s[m[2]:m[3]], " earlier"), " before")
		r.add(item{kind: "reject", text: opt, why: strings.TrimRight(s[m[4]:m[5]], ". ")})
		return
	}
	// "ignore what I said about Render yesterday"
	if m := matchIf(strings.Contains(low, "ignore what"), ignoreSaid, low); m != nil && isChoiceWord(firstWord(s[m[2]:m[3]]), false) {
		r.add(item{kind: "reject", text: s[m[2]:m[3]]})
		return
	}

	if asked != "" && askedNo.MatchString(low) {
		r.add(item{kind: "reject", text: asked})
		return
	}
	pending := r.pendingWhy
	r.pendingWhy = ""
	n0, said := len(r.items), s
	whyNext := r.whyNext
	r.whyNext = false
	defer func() { r.prevText, r.prevEmpty = said, len(r.items) == n0 }()
	if emphasisOnly.MatchString(low) {
		// "dagster schedules in UTC. always.": the sentence before is a
		// rule.
		if r.prevEmpty && r.prevText != "" && len(strings.Fields(r.prevText)) <= 12 && !strings.HasSuffix(r.prevText, "?") {
			if lp := lower(r.prevText); !hedge.MatchString(lp) && !questionLead.MatchString(lp) && !reported.MatchString(lp) && !pronounLead.MatchString(lp) {
				r.add(item{kind: "constraint", text: capitalise(strings.TrimRight(r.prevText, ".! "))})
			}
		} else {
			r.last = prevLast // a reason that follows is still theirs
		}
		return
	}
	if rejectsOnly(r.items, prevLast) && bareOption(s) && !staysTail.MatchString(low) {
		// "nah, not Airflow. Dagster.": the option taken instead.
		r.decision(item{kind: "decision", text: "Use " + strings.TrimRight(s, ".! "), change: true})
		r.whyNext = true
		return
	}
	if m := fineInstead.FindStringSubmatchIndex(low); m != nil && rejectsOnly(r.items, prevLast) && len(s) == len(low) && hasChoice(s[m[2]:m[3]]) && (m[4] >= 0 || !strings.Contains(low[m[3]:], "enough") || slices.ContainsFunc(prevLast, func(i int) bool { return r.items[i].why != "" })) {
		// "Please don't add an ORM. Plain SQL with pgx is fine.", "Ditch
		// Socket.IO. Server-sent events are enough for order tracking.":
		// what does instead of the option just turned down. (A bare
		// "enough" only after a turn-down with its reason: in "No Redux.
		// Context plus TanStack Query is enough." it is the reason.)
		text := "Use " + s[m[2]:m[3]]
		if m[4] >= 0 {
			text += s[m[4]:m[5]]
		}
		r.decision(item{kind: "decision", text: text})
		return
	}
	// "Hilt for dependency injection. Koin is simpler but we already use
	// Dagger": the option weighed beside the choice and passed over.
	if m := matchIf(strings.Contains(low, " but "), betterBut, low); m != nil && len(prevLast) > 0 {
		if m[2] < 0 { // "X was a nice idea but …"
			m = []int{0, 0, m[6], m[7], m[8], m[9]}
		}
		if o := s[m[2]:m[3]]; (bareOption(o) || !strings.Contains(o, " ") && isNamed(o) && !stopWords[lower(o)]) && slices.ContainsFunc(prevLast, func(i int) bool { return r.items[i].kind == "decision" }) &&
			!(calledGood.MatchString(low[:m[4]]) && slices.ContainsFunc(prevLast, func(i int) bool { return namesAny(s[m[4]:m[5]], choices(r.items[i].text)) })) {
			// Not "XGBoost was fine but LightGBM trains three times
			// faster": praise of the other, and the choice's own reason.
			r.add(item{kind: "reject", text: s[m[2]:m[3]], why: strings.TrimPrefix(strings.TrimRight(s[m[4]:m[5]], ". "), "because ")})
			return
		}
	}
	// "For the GPU back end we go with Kokkos … Raw CUDA would lock us to
	// NVIDIA": another option judged, after the choice, is turned down.
	if slices.ContainsFunc(prevLast, func(i int) bool { return r.items[i].kind == "decision" && !r.items[i].change }) && !strings.Contains(low, " but ") && judgement.MatchString(low) {
		qual, rest := "", s
		if q, after, ok := strings.Cut(s, " "); ok && (qualifiers[lower(q)] || lower(q) == "raw" || lower(q) == "bare" || lower(q) == "native") {
			qual, rest = q+" ", after
		}
		for _, i := range prevLast {
			if r.items[i].kind != "decision" || r.items[i].change {
				continue // after a change, it is the change's reason
			}
			if opt, because := judgedOption(rest, r.items[i].text); opt != "" && (bareOption(opt) || categoryOf[lower(opt)] != "") {
				r.add(item{kind: "reject", text: qual + opt, why: strings.TrimRight(because, ". ")})
				return
			}
		}
	}
	// A reason of its own, for the statement before it.
	if m := followReason.FindStringSubmatch(low); m != nil && len(prevLast) > 0 {
		r.attach(prevLast, strings.TrimRight(s[len(s)-len(m[1]):], ". "))
		r.last = prevLast
		return
	}
	r.stressed = false
	if m := emphasisTail.FindStringIndex(low); m != nil && m[0] > 0 {
		// "…, no exceptions": said to stress the rule, nothing turned down.
		s, low = s[:m[0]], low[:m[0]]
		r.stressed = true
	}
	if m := revisitTail.FindStringIndex(low); m != nil && m[0] > 0 {
		// "Postgres for now — we can revisit once the reports get heavy":
		// when it may change is no hedge on what is chosen.
		s, low = s[:m[0]], low[:m[0]]
	}
	if i := hedgedTail(low); i > 0 {
		// "We decided to keep X and add Y later": the decision is the
		// clause before the hedged one.
		s, low = strings.TrimSpace(s[:i]), low[:i]
	}
	// "… to keep costs down", "… so we can ship fixes without review":
	// the reason of what the sentence settles, said as its purpose.
	purpose, purposeWord := "", ""
	if m := purposeTail.FindStringSubmatchIndex(low); m != nil && m[0] > 0 {
		g := 2
		if m[2] < 0 {
			g = 4
		}
		purpose, s, low = strings.TrimRight(s[m[g]:m[g+1]], ". "), s[:m[0]], low[:m[0]]
		purposeWord = map[int]string{2: "to", 4: "so"}[g]
	}
	if purpose == "" {
		// "Fivetran is out, too expensive for 12 sources"
		if head, why := r.trailingReason(s); why != "" {
			purpose, s, low = why, head, low[:len(head)]
		}
	}
	if m := prefRule.FindStringSubmatchIndex(low); m != nil && !oneOff.MatchString(low) {
		// "I'd rather we avoid ORMs": a rule, though it reads as a wish.
		if body := s[m[2]:m[3]]; strings.HasPrefix(lower(body), "use ") {
			if k := ratherThanIn.FindStringIndex(lower(body)); k != nil && !carrier.MatchString(lower(body[k[0]:])) {
				// "I'd rather we use Postgres than MySQL": the first
				// instead of the second.
				r.statement(capitalise(body[:k[0]])+" instead of "+body[k[1]:], r.changed)
				return
			}
			r.decisionBody(capitalise(body), r.changed)
		} else {
			r.add(item{kind: "constraint", text: capitalise(body)})
		}
		return
	}
	if supportRule.MatchString(strings.TrimRight(low, ".! ")) {
		// "Support Node 20 and later only": "later" here is a version.
		r.add(item{kind: "constraint", text: strings.TrimRight(s, ".! ")})
		return
	}
	// "i guess X is fine": the hedge is on how keen the user is, not on
	// whether X is taken.
	halfHearted := (strings.HasPrefix(low, "i guess ") || strings.HasPrefix(low, "i think ") || strings.HasPrefix(low, "i suppose ") ||
		strings.HasSuffix(strings.TrimRight(low, ".! "), " i guess") || strings.HasSuffix(strings.TrimRight(low, ".! "), " i think")) && fineWith.MatchString(strings.TrimRight(low, ".! "))
	if m := matchIf(strings.Contains(low, ", "), judgeComma, low); m != nil && isReported(low[m[2]:m[3]]) && switchTo.MatchString(low[m[4]:m[5]]) && !hedge.MatchString(low[m[4]:m[5]]) {
		// "the eval run says sonnet beats gpt-4o on our tickets, switch
		// the answer model to sonnet": what was reported is the reason.
		n := len(r.items)
		r.statement(capitalise(s[m[4]:m[5]]), true)
		r.attach(seq(n, len(r.items)), strings.TrimSpace(s[m[2]:m[3]]))
		return
	}
	if questionLead.MatchString(low) || !halfHearted && hedge.MatchString(low) && hedge.MatchString(strings.ReplaceAll(beforeReason(low), "eventually consistent", "consistent")) ||
		isReported(low) && isReported(beforeDash(low)) && !takeBack.MatchString(strings.TrimPrefix(strings.TrimPrefix(low, "ok "), "okay ")) || negatedDecision.MatchString(low) {
		if len(prevLast) > 0 && reasonish.MatchString(low) && !strings.Contains(low, "?") && !reported.MatchString(low) && !questionLead.MatchString(low) {
			r.attach(prevLast, strings.TrimRight(s, ". "))
		}
		return
	}
	n := len(r.items)
	r.statement(s, r.changed)
	if purpose != "" {
		r.attach(seq(n, len(r.items)), purpose)
		if purposeWord != "" {
			// A rule has no reason of its own: it keeps its purpose in
			// its words ("Use a fixed seed everywhere so the runs are
			// reproducible").
			for i := n; i < len(r.items); i++ {
				if it := &r.items[i]; it.kind == "constraint" {
					it.text += " " + purposeWord + " " + purpose
				}
			}
		}
	}
	if n == 0 && len(r.items) == 0 && (judgement.MatchString(low) || soured.MatchString(low)) && namesKnown(s) {
		r.pendingWhy = strings.TrimRight(s, ".! ") // said before what it explains
	} else if pending != "" {
		r.replacing(n, pending) // "Cron was a bad idea, …"
		for i := n; i < len(r.items); i++ {
			if it := &r.items[i]; it.kind == "decision" && it.change && it.why == "" {
				it.why = pending
			}
		}
	}
	if len(r.items) == n && len(prevLast) > 0 && (reasonish.MatchString(low) || itDoes.MatchString(low) || whyNext && (reasonClause.MatchString(low) || modalClause.MatchString(low) || commentary.MatchString(" "+low+" "))) {
		r.attach(prevLast, strings.TrimRight(s, ". "))
		r.last = prevLast
	}
}

// hedgedTail returns where the hedged clause of an explicit decision
// begins ("we decided to keep X| and add Y later"), or 0: a sentence that
// opens with "we decided to" and whose only hedge follows an " and " or a
// ", " after that decision.
func hedgedTail(low string) int {
	loc := hedge.FindStringIndex(low)
	if loc == nil || !decidedTo.MatchString(low) {
		return 0
	}
	i := max(strings.LastIndex(low[:loc[0]], " and "), strings.LastIndex(low[:loc[0]], ", "))
	if i <= 0 || !decidedTo.MatchString(low[:i]) || questionLead.MatchString(low) || reported.MatchString(low) || negatedDecision.MatchString(low) {
		return 0
	}
	return i
}

// amounts returns the "N unit for part" list s is, after a short label
// ("Timeouts: 10 s for the upstream API, 30 s for the report export") if
// it has one, with that label and ": "; "" when s is not such a list.
func amounts(s string) (label, body string) {
	body = s
	if head, rest, ok := strings.Cut(s, ": "); ok && len(strings.Fields(head)) <= 3 {
		label, body = head+": ", rest
	}
	if body == "" || body[0] < '0' || body[0] > '9' {
		return "", ""
	}
	for _, p := range strings.Split(body, ", ") {
		if !amountFor.MatchString(lower(p)) {
			return "", ""
		}
	}
	return label, body
}

// forPairs returns the "X for Y" parts of s when every part of it, split at
// commas, names an option for a part of the product; nil otherwise.
func forPairs(s string) []string {
	if swapFor.MatchString(lower(s)) {
		return nil // "Swap Auth0 for Supabase Auth": a change, not a pair
	}
	whole := s
	if m := trailingNowOn.FindStringIndex(lower(s)); m != nil {
		s = s[:m[0]] // "Datadog for monitoring then"
		if tail := strings.TrimLeft(lower(whole[m[0]:]), ", "); (bareOption(s) || isChoiceWord(firstWord(s), true) && len(strings.Fields(s)) <= 4 && !strings.ContainsAny(s, ",;:?")) &&
			(tail == "for now" || tail == "after all" || tail == "from now on" || tail == "from here on" || tail == "going forward") {
			return []string{whole} // "Postgres for now"
		}
	}
	parts := strings.Split(s, ", ")
	for i, p := range parts {
		p = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(p), "and "), "with "))
		m := forPair.FindStringSubmatch(lower(p))
		if m == nil {
			return nil
		}
		x := p[:len(m[1])]
		if x = unqualified(x); x[0] >= '0' && x[0] <= '9' || !productPart(m[2]) && !restParts[m[2]] || !isChoiceWord(firstWord(x), false) || stopWords[lower(firstWord(x))] || askedFor.MatchString(lower(x)) ||
			pairVerb.MatchString(lower(x)) {
			return nil
		}
		parts[i] = p
	}
	return parts
}

// pairVerb: an imperative before the option ("Add Redis for caching"),
// which is no option's name.
var pairVerb = mustPattern(`^(?:add|use|keep|try|pick|choose|install|adopt|bring in|introduce|enable|set up|switch to|move to)\s`)

// askedFor: someone asking for a part, not an option chosen for it
// ("Someone asked for PDF exports").
var askedFor = mustPattern(`^(?:someone|somebody|everyone|nobody|people|users|customers|a customer|a user|they|he|she)\b|\b(?:asked|asks|wants|wanted|said|says|requested|mentioned|suggested|complained)\b`)

// restParts name what is left once the other parts are chosen for
// ("plain HTTP for everything else").
var restParts = map[string]bool{"everything else": true, "the rest": true, "rest": true, "all the rest": true}

// productParts are the parts of a product an option is chosen for.
var productParts = func() map[string]bool {
	m := map[string]bool{}
	for c := range categories {
		m[c] = true
	}
	for _, w := range strings.Fields(`frontend backend server client db ui web mobile app api apis routing router http cache caching queue
		queues jobs worker workers tests testing unit e2e logging logs auth authentication ci cd deploy deploys deployment deployments hosting
		infra infrastructure styling styles css search metrics monitoring tracing storage migrations build builds bundling bundler packages
		docs documentation orm database databases persistence events messaging broker scheduling cron config configuration secrets
		payments emails email notifications analytics dashboard admin scripts tooling linting lint formatting reporting errors
		service services traces file queries query tracking alerts alerting observability crashes releases provisioning realtime matchmaking leaderboards calls voice video chat output outputs exports files validation serialization
		parsing dependencies packaging orchestration forms i18n charts checkout billing receipts invoices signup login
		onboarding uploads thumbnails images media assets messages tasks traffic store panel site website cli commands releases backups training inference evaluation eval
		evals experiments embeddings models predictions cluster clusters ingress egress autoscaling scaling nodes gitops networking dns cdn
		mesh certificates certs tls flags toggles fetching containers registry navigation updates schema page pages screen screens popup widget widgets extension
		layer desktop reports datasets dataset data features feature checkpoints artifacts pipelines pipeline code
		serving tuning firmware device devices sensor sensors gateway gateways bootloader telemetry connectivity radio ota fleet
		protocol transport payload payloads hardware board boards ingestion readings storefront shop cart catalog catalogue
		reference executor aligner alignment caller calling genotyping annotation annotations workflow workflows qc trimming
		sfu mcu player players packager packaging ingest transcoding captions subtitles thumbnails drm playback
		integration integrations vault management handling tool`) {
		m[w] = true
	}
	return m
}()

// productPart reports whether the words name a part of a product ("the
// backend", "unit tests", "the message broker").
func productPart(words string) bool {
	f := strings.Fields(words)
	if len(f) == 0 || len(f) > 3 {
		return false
	}
	last := f[len(f)-1]
	return productParts[last] || len(last) > 3 && strings.HasSuffix(last, "s") && productParts[last[:len(last)-1]] // "game servers"
}

// qualifiedPart reports whether words name a product part, alone or
// qualified by where it stands ("networking on Android", "the cache in
// the worker", "storage for the uploads").
func qualifiedPart(words string) bool {
	if productPart(words) {
		return true
	}
	for _, q := range [...]string{" on ", " in ", " for "} {
		if head, tail, ok := strings.Cut(words, q); ok && productPart(head) && len(strings.Fields(tail)) <= 2 {
			return true
		}
	}
	return false
}

// readFirst reads part, the first part of a sentence, and keeps what it
// read when that settles something (a decision or a rule); otherwise it
// takes it back — the items and which of them the next sentence may give
// a reason to — so that the whole sentence is read as one.
func (r *reader) readFirst(part string) bool {
	n, last := len(r.items), r.last
	r.sentence(part)
	if len(r.items) > n && settles(r.items[n:]) {
		return true
	}
	r.items, r.last = r.items[:n], last
	return false
}

// cutActually returns s and low without a leading "actually".
func cutActually(s, low string) (string, string) {
	for _, p := range [...]string{"actually, ", "actually "} {
		if strings.HasPrefix(low, p) {
			return s[len(p):], low[len(p):]
		}
	}
	return s, low
}

// lowerPart lower-cases a part's own words and keeps the case of where
// it stands ("Networking on Android" → "networking on Android").
func lowerPart(words string) string {
	for _, q := range [...]string{" on ", " in ", " for "} {
		if head, tail, ok := strings.Cut(words, q); ok && !productPart(lower(words)) {
			return lower(head) + q + tail
		}
	}
	return lower(words)
}

// optionOf reports whether option is a named option for subject ("the
// database is Postgres", "our queue will be NATS"), not a state ("the
// frontend is broken") or a culprit ("the problem is Redis").
func optionOf(subject, option string) bool {
	subject = lower(subject) // "the API is Go"
	o := lower(strings.Fields(option)[0])
	if stopWords[strings.Trim(o, ".,")] && !strings.HasPrefix(bare(option), "Go") {
		return false // "the release is Monday"; "the API is Go" stays
	}
	if c := categoryOf[o]; c != "" {
		return productPart(subject)
	}
	named, _, _ := strings.Cut(option, " with ") // "Go 1.23 with the standard library router", not "built with Flutter"
	return productPart(subject) && isNamed(named)
}

// qualifiedOption reports whether s opens with one or two qualifiers and
// then a named option: "per-device X.509 certificates", "managed Kafka".
func qualifiedOption(s string) bool {
	f := strings.Fields(s)
	for i := 1; i < len(f) && i <= 2; i++ {
		if q := lower(f[i-1]); strings.ContainsAny(q, ",.;:0123456789") || stopWords[q] || notQualifier[q] {
			return false
		}
		if isChoiceWord(f[i], false) && !strings.ContainsAny(f[i][:1], "0123456789") {
			return true
		}
	}
	return false
}

// notQualifier: words before a name that measure or point rather than
// say which kind ("about 2 GB", "every Sentry event").
var notQualifier = map[string]bool{"about": true, "around": true, "roughly": true, "approximately": true, "up": true, "over": true,
	"under": true, "every": true, "each": true, "his": true, "her": true, "their": true, "whatever": true, "whichever": true}

// carriedOver: a verb that says what goes "over" a protocol or link.
var carriedOver = mustPattern(`\b(?:report|reports|talk|talks|send|sends|sent|sync|syncs|publish|publishes|connect|connects|communicate|communicates|stream|streams|travel|travels|tunnel|tunnels|push|pushes|ship|ships|speak|speaks|arrive|arrives|come in|comes in)$`)

// wrongAbout: an option dropped as a mistake undone.
var wrongAbout = mustPattern(`^(?:(?:i was|we were|i'?ve been|we'?ve been)\s+wrong\s+about\s+([\w.+#/\-]+)(?:\s+(?:for|in|on)\s+[^,;.]{1,30})?|(?:let'?s\s+|please\s+|we'?re\s+|we are\s+|we'?ll\s+)?(?:undo|undoing|revert|reverting|roll back|rolling back)\s+the\s+([\w.+#/\-]+)\s+(?:change|switch|move|migration|decision))(\s*[,;.—–-].*|)$`)

// outputThing: a setting of what a program writes ("the output
// format", "the output directory"), not output pasted or reported.
var outputThing = mustPattern(`\boutput\s+(?:format|formats|directory|dir|folder|file|files|path|schema|mode|modes|style|encoding|stream|columns?|flags?|types?|options?|width|level)\b`)

// isReported reports whether low, a sentence in lower case, reports what
// someone or something said rather than settling anything.
func isReported(low string) bool {
	if saidNo.MatchString(low) {
		return false // "We already said no to MongoDB": the user's own no
	}
	if outputThing.MatchString(low) {
		low = outputThing.ReplaceAllString(low, "setting")
	}
	if m := writeItIn.FindStringSubmatch(low); m != nil && (isChoiceWord(strings.TrimRight(m[1], "."), false) || strings.TrimRight(m[1], ".") == "go") {
		return false // "write the CLI in Rust": what the part is written in, not a text asked for
	}
	return reported.MatchString(low)
}

// writeItIn: a part and the language or framework it is written in.
// writePart: the verb of that, before the part.
var writePart = mustPattern(`^(?:write|rewrite|build|implement|code|put|store|keep|save|run|host)\s+`)
var writeItIn = mustPattern(`^(?:(?:let'?s|we'?ll|please)\s+)?write\s+(?:the|a|an|our)\s+[\w\-]+(?:\s[\w\-]+){0,3}?\s+(?:in|with|using)\s+([\w.+#\-]+)[.!]*$`)

// calledGood: an option called good, not better ("was fine", "felt nice").
var calledGood = mustPattern(`\b(?:fine|good|great|nice|solid|ok|okay)\b`)

// namesAny reports whether s names one of the options cs.
func namesAny(s string, cs []string) bool {
	ws := words(s)
	for _, c := range cs {
		if slices.Contains(ws, c) {
			return true
		}
	}
	return false
}

// twoWordName: an option named by two capitalised words, alone or for
// a part ("Use Cohere Rerank for reranking", "use Google Cloud").
var twoWordName = mustPattern(`^[Uu]se\s+[A-Z][\w.\-]*\s+[A-Z][\w.\-]*(?:\s+(?:for|on|in|with|as)\s+[^,;:]{1,60})?[.!]?$`)

// staysBut: an option said to stay, then a change beside it.
var staysBut = mustPattern(`^(?:(?:on reflection|actually|ok|okay|fine),?\s+)?(?:(.{2,40}?)\s+(?:stays|remains|is staying)(?:\s+as it is|\s+as is)?,?\s+but\s+(\S.{3,})|(?:we\s+|let'?s\s+)?keep\s+(?:using\s+)?(\S+(?:\s\S+)?),?\s+but\s+(add\s.{3,}))$`)

// machineNo: who "rejected" something when it is a program, not a
// person ("by the load balancer with a 413").
var machineNo = mustPattern(`\b(?:\d{3}|error|status|load balancer|server|gateway|proxy|firewall|api|broker|validator|linter|ci|cdn|waf|registry|webhook|browser|kernel|database)\b`)

// saidNo: the user's own earlier no.
var saidNo = mustPattern(`^(?:we|i)\s+(?:already\s+)?said\s+no\s+to\s+\S`)

// dontSuggest: an option the assistant is told not to offer again.
// "Don't let anyone slip hg19 back in" says the same of an option
// taken out.
var dontSuggest = mustPattern(`^(?:please\s+)?(?:don'?t|do not|never|stop)\s+(?:suggest|suggesting|propose|proposing|recommend|recommending|bring(?:ing)? up|mention|mentioning)\s+([\w.+#/\-]+(?:\s[\w.+#/\-]+)??)(?:\s+(?:again|anymore|any more|ever again))?(?:[,;]\s+(.+)|[.!]*)$|^(?:we|i)\s+(?:already\s+)?said\s+no\s+to\s+([\w.+#/\-]+(?:\s[\w.+#/\-]+)??)(?:[,;]\s+(.+)|[.!]*)$|^(?:please\s+)?(?:don'?t|do not|never)\s+(?:let\s+(?:anyone|anybody|someone|them|people|the agent|it)\s+)?(?:slip|sneak|bring|put|add|pull|drag|let)\s+([\w.+#/\-]+(?:\s[\w.+#/\-]+)??)\s+back(?:\s+in(?:to\s+\S+(?:\s\S+)?)?)?(?:[,;]\s+(.+)|[.!]*)$`)

// ruledOut: "Kafka was rejected last week, don't bring it up again".
var ruledOut = mustPattern(`^([\w.+#/\-]+(?:\s[\w.+#/\-]+)??)\s+(?:was|were|got|has been|have been)\s+(?:rejected|ruled out|vetoed|turned down|shot down)(?:\s+(?:last|this|earlier|yesterday|already|in the)\b[^,;.]*)?(?:[,;.]|$)`)

// nobodyWants: an option nobody on the team wants (more of).
var nobodyWants = mustPattern(`^(?:nobody|no one|no-one)\s+(?:here\s+|on the team\s+)?wants\s+(?:another|a|an|more|any)\s+([\w.+#/\-]+(?:\s[\w.+#/\-]+)??)(?:\s+(?:integration|server|servers|service|services|dependency|tool|vendor|cluster|account|subscription|bill|instance))?[.!]*$`)

// goToward: "go to Zephyr", said of an option, is "use Zephyr".
var goToward = mustPattern(`^(?i:(?:let'?s\s+|we'?ll\s+|just\s+)?go\s+(?:to|for))\s+(\S.*)$`)

// otherOption reports whether other, said after "with" of the language
// head ("Rust with Embassy", "Kotlin with Ktor"), is a well-known option
// of another kind: the language and what is built on it are two choices,
// each replaced on its own, not a detail of the first ("Go 1.23 with the
// standard library router"). Other pairs ("Django with Celery") stay one
// choice, as they are said.
func otherOption(head, other string) bool {
	h, o := strings.Fields(head), strings.Fields(other)
	if len(h) == 0 || len(o) == 0 || len(o) > 2 {
		return false
	}
	oc := categoryOf[lower(bare(o[0]))]
	return (categoryOf[lower(bare(h[0]))] == "language" || bare(h[0]) == "Go") && oc != "" && oc != "language"
}

// identLike reports whether s reads as an identifier (events.dlq,
// user_events, eu-west-1, 8080), not a word of prose.
func identLike(s string) bool {
	return strings.ContainsAny(s, "._-/:0123456789")
}

// troubleWord names what goes wrong in a part ("errors in Postgres"), not
// the part itself.
var troubleWord = map[string]bool{"errors": true, "error": true, "crashes": true, "bugs": true, "bug": true, "issues": true,
	"problems": true, "failures": true, "warnings": true, "leaks": true, "timeouts": true}

// placedOption reports whether the words after a placing verb's
// preposition name a well-known option: the first ("over Kafka to the
// ingest service") or the last ("as a Go service on Fly.io").
func placedOption(first, rest string) bool {
	if categoryOf[lower(strings.Trim(first, ".,"))] != "" {
		return true
	}
	f := strings.Fields(rest)
	return len(f) > 0 && categoryOf[lower(strings.Trim(f[len(f)-1], ".,"))] != ""
}

// seq returns the item indexes from, …, to-1.
func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// attach gives the items idx a reason they lack.
func (r *reader) attach(idx []int, why string) {
	why = tidy(why)
	for _, i := range idx {
		if it := &r.items[i]; (it.kind == "decision" || it.kind == "reject") && it.why == "" {
			if at, _, ok := usedNow(why, it.text); it.kind == "reject" && ok {
				// "we dropped Diesel weeks ago, it's sqlx with compile-time
				// checked queries": what is used now, not a reason.
				defer r.decision(item{kind: "decision", text: "Use " + why[at:], change: true, old: it.text})
				continue
			}
			it.why = why
		}
	}
}

// statement reads a sentence without its reason-only or question cases.
// change is true when an earlier part marked it as a change of decision.
func (r *reader) statement(s string, change bool) {
	if r.reads != nil {
		if *r.reads++; *r.reads > maxReads {
			return // a turn built to make the reading blow up reads no further
		}
	}
	s = strings.TrimSpace(strings.TrimRight(s, ".!;: "))
	if s == "" {
		return
	}
	low := lower(s)
	if m := matchIf(strings.Contains(low, " for ") && strings.Contains(low, ", "), forList, low); m != nil &&
		optionLed(s[m[2]:m[3]], strings.HasPrefix(low, "use ")) && optionLed(s[m[4]:m[5]], true) && !hedge.MatchString(low) && !strings.Contains(low, " only ") {
		// "Use Go for the backend, Postgres for storage", "Storybook for
		// the component docs, Chromatic for the visual diffs": one
		// decision each (forPairs asks more of the parts).
		for _, g := range [][2]int{{m[2], m[3]}, {m[4], m[5]}} {
			r.decision(item{kind: "decision", text: "Use " + s[g[0]:g[1]], change: change})
		}
		return
	}
	// "…; that's final" / "…, final": emphasis, and a sign of a decision.
	decided := false
	if loc := decisive.FindStringIndex(low); loc != nil {
		decided = true
		s, low = strings.TrimSpace(strings.TrimRight(s[:loc[0]], ",;:—– ")), low[:loc[0]]
		low = strings.TrimSpace(strings.TrimRight(low, ",;:—– "))
		if s == "" {
			return
		}
	}
	// Leading interjections; "actually", "no", "scratch that" mark a change.
	for {
		loc := interjection.FindStringIndex(low)
		if loc == nil || loc[1] == 0 || loc[1] >= len(low) {
			break
		}
		if changeWords.MatchString(low) {
			change = true
		}
		s, low = s[loc[1]:], low[loc[1]:]
	}
	if anymore.MatchString(low) {
		change = true
	}
	if strings.Contains(low, "step") && strings.Contains(low, " and ") {
		// "skip step 2 and do step 4 first": each change of the plan on
		// its own (read whole, the change was one decision of both).
		if parts := andParts(s, 4); len(parts) > 1 && slices.ContainsFunc(parts, func(p string) bool { return skipStep.MatchString(lower(strings.TrimSpace(p))) }) {
			for _, p := range parts {
				r.statement(p, change)
			}
			return
		}
	}
	if m := matchIf(strings.Contains(low, " is ") || strings.Contains(low, " are "), twoPartsAre, low); m != nil && hasChoice(s[m[4]:m[5]]) && hasChoice(s[m[8]:m[9]]) {
		// "The backend is Django, the frontend is React": two parts and
		// their options, read one after the other (the second was lost).
		r.statement(s[m[2]:m[3]], change)
		r.statement(s[m[6]:m[7]], change)
		return
	}
	if m := matchIf(strings.HasPrefix(low, "i'm using ") || strings.HasPrefix(low, "im using ") || strings.HasPrefix(low, "i am using "), imUsing, low); m != nil {
		// "I'm using SvelteKit and Supabase": the stack, said as it is.
		opts := optionAnd.Split(s[m[2]:m[3]], -1)
		if !slices.ContainsFunc(opts, func(o string) bool { return !isChoiceWord(strings.TrimSpace(o), false) }) {
			for _, o := range opts {
				r.decision(item{kind: "decision", text: "Use " + strings.TrimSpace(o), change: change})
			}
			return
		}
	}
	if m := matchIf(strings.HasPrefix(low, "we") || strings.HasPrefix(low, "i"), switchedTo, low); m != nil && isChoiceWord(firstWord(s[m[4]:m[5]]), false) {
		// "We switched from Yarn to pnpm": a change already made is what
		// holds now.
		it := item{kind: "decision", text: "Use " + s[m[4]:m[5]], change: true}
		if m[2] >= 0 {
			it.old = s[m[2]:m[3]]
		}
		r.decision(it)
		return
	}
	if m := matchIf(strings.HasPrefix(low, "i") || strings.HasPrefix(low, "we"), idGoWith, low); m != nil && (bareOption(s[m[2]:m[3]]) || isNamed(s[m[2]:m[3]])) {
		// "I'd go with Tailwind": the user's own pick.
		r.decision(item{kind: "decision", text: "Use " + s[m[2]:m[3]], change: change})
		return
	}
	if m := matchIf(strings.HasPrefix(low, "rather than ") || strings.HasPrefix(low, "instead of "), ratherThan, low); m != nil && isChoiceWord(firstWord(s[m[2]:m[3]]), false) {
		// "Rather than Kafka, let's use NATS": the choice, over the
		// option named first.
		n := len(r.items)
		r.statement(s[m[4]:m[5]], change)
		for i := n; i < len(r.items); i++ {
			if it := &r.items[i]; it.kind == "decision" && it.old == "" {
				it.old, it.change = s[m[2]:m[3]], true
			}
		}
		return
	}
	if m := matchIf(strings.Contains(low, " now") || strings.Contains(low, " again"), fineNow, low); m != nil &&
		len(strings.Fields(s[m[2]:m[3]])) <= 3 && (hasChoice(s[m[2]:m[3]]) || isNamed(s[m[2]:m[3]])) && !hedge.MatchString(low) {
		// "lodash is fine now, it's tree-shaken": the option a rule kept
		// out is allowed (an option only: "the build is fine now" reports
		// a fix).
		r.add(item{kind: "lift", text: "use " + s[m[2]:m[3]]})
		return
	}
	if m := matchIf(strings.Contains(low, " free to ") || strings.Contains(low, "you can ") || strings.Contains(low, "we can ") || strings.Contains(low, "you may ") || strings.Contains(low, " ok to ") ||
		strings.Contains(low, " okay to ") || strings.Contains(low, " fine to ") || strings.Contains(low, "go ahead and "), allowedNow, low); m != nil && !hedge.MatchString(low) &&
		!pronounLead.MatchString(low[m[4]:m[5]]) {
		// "you can use lodash now": what a rule kept out is allowed.
		r.add(item{kind: "lift", text: s[m[2]:m[3]]})
		return
	}
	if m := matchIf(strings.Contains(low, "need"), noLongerNeed, low); m != nil && !hedge.MatchString(low) {
		// "We no longer need to support IE11", "IE11 support is no longer
		// needed": what was decided is dropped.
		g := 2 // the second form's group when the first did not match
		if m[g] < 0 {
			g = 4
		}
		it := s[m[g]:m[g+1]]
		r.add(item{kind: "reject", text: strings.TrimSpace(it)})
		r.changed = true
		return
	}
	if m := matchIf(strings.Contains(low, " back "), backInScope, low); m != nil && !pronounLead.MatchString(low) {
		// "The admin panel is back in scope": what was left out is in
		// again.
		r.decision(item{kind: "decision", text: capitalise(s), change: true})
		return
	}
	// "migrating to Fastify isn't worth it", "adding Redis would be
	// overkill": the option the move or the addition would bring in is
	// turned down.
	if m := matchIf(strings.Contains(low, " worth") || strings.Contains(low, " overkill") || strings.Contains(low, " too ") ||
		strings.Contains(low, " waste") || strings.Contains(low, " pointless") || strings.Contains(low, " unnecessary"), moveNotWorth, low); m != nil && isChoiceWord(firstWord(s[m[2]:m[3]]), false) {
		r.add(item{kind: "reject", text: s[m[2]:m[3]], why: strings.TrimSpace(s[m[3]:])})
		return
	}
	// "use Drizzle here": the place is this project, said of any choice.
	if hereWord(low) && useHereLead.MatchString(low) {
		if m := hereTail.FindStringIndex(low); m != nil && m[0] > 0 {
			s, low = s[:m[0]], low[:m[0]]
		}
	}
	// "the plan is we add the endpoint first then the webhook then the
	// worker": a plan said in one breath.
	if m := matchIf(!r.probe && strings.Contains(low, "plan is"), planIs, low); m != nil {
		if steps := thenSteps(s[m[2]:m[3]]); len(steps) >= 2 {
			r.add(item{kind: "plan", steps: steps})
			return
		}
	}
	// "Tempo replaces Jaeger as the backend": the one said first is used
	// instead of the other.
	if m := matchIf(strings.Contains(low, "replace") || strings.Contains(low, "takes over"), replacesForm, low); m != nil && isChoiceWord(firstWord(s[m[2]:m[3]]), true) && !pronounLead.MatchString(low) {
		text := "Use " + s[m[2]:m[3]]
		if m[6] >= 0 {
			text += " as " + s[m[6]:m[7]]
		}
		r.decision(item{kind: "decision", text: text + " (instead of " + s[m[4]:m[5]] + ")", old: s[m[4]:m[5]], change: true})
		return
	}
	// "routing moves to OSRM self-hosted": a part moved to another option.
	if m := matchIf(strings.Contains(low, " to "), movesTo, low); m != nil && productPart(low[m[2]:m[3]]) && (hasChoice(s[m[4]:m[5]]) || isChoiceWord(firstWord(s[m[4]:m[5]]), false)) {
		r.decision(item{kind: "decision", text: "Use " + s[m[4]:m[5]] + " for " + s[m[2]:m[3]], change: true})
		return
	}
	// "the cluster admins moved to Apptainer last month, use that instead
	// of Singularity": the one option the clause before names, used in
	// place of the other, with that clause as the reason.
	if m := matchIf(strings.Contains(low, " instead of "), useThatInstead, low); m != nil {
		var named []string
		for i, raw := range strings.Fields(s[m[2]:m[3]]) {
			if isChoiceWord(raw, i == 0) {
				named = append(named, bare(raw))
			}
		}
		if old := s[m[4]:m[5]]; len(named) == 1 && !strings.EqualFold(named[0], old) {
			r.decision(item{kind: "decision", text: "Use " + named[0] + " instead of " + old, old: old, why: s[m[2]:m[3]], change: true})
			return
		}
	}
	// "i guess pydantic v2 is fine for now": an option accepted, however
	// half-heartedly.
	if m := matchIf(strings.Contains(low, " fine") || strings.Contains(low, " good enough") || strings.Contains(low, " plenty") || strings.Contains(low, " enough"), fineWith, low); m != nil && bareOption(s[m[2]:m[3]]) {
		if strings.Contains(low, " plenty") || strings.Contains(low, " enough") && !strings.Contains(low, "good enough") {
			// "react context is plenty for this": why it is used.
			why := strings.TrimSpace(s[m[3]:])
			if m[4] == m[5] {
				why = "" // "URLSession is enough": said as the choice, no reason
			}
			r.decision(item{kind: "decision", text: "Use " + s[m[2]:m[3]], why: why})
			return
		}
		r.decision(item{kind: "decision", text: "Use " + s[m[2]:m[3]] + s[m[4]:m[5]]})
		return
	}
	// "sure, Nakama works": the option offered, taken.
	if m := matchIf(strings.Contains(low, " works"), worksFor, low); m != nil && bareOption(s[m[2]:m[3]]) {
		r.decision(item{kind: "decision", text: "Use " + s[m[2]:m[3]]})
		if m[4] >= 0 {
			r.sentence(capitalise(s[m[4]:m[5]]))
		}
		return
	}
	// "Dependency scanning with Trivy in CI", "formatting with prettier":
	// an activity and the well-known option it is done with.
	if m := matchIf(strings.Contains(low, " with "), activityWith, low); m != nil && categoryOf[lower(strings.Trim(s[m[4]:m[5]], ".,"))] != "" &&
		strings.HasSuffix(lower(s[m[2]:m[3]]), "ing") && !pronounLead.MatchString(low) && !tryingWith.MatchString(low) && !stickWith.MatchString(low) && !goingWith.MatchString(low) {
		r.decision(item{kind: "decision", text: "Use " + s[m[4]:m[5]] + " for " + lower(s[m[2]:m[3]])})
		return
	}
	// "Timestamps are stored in the user's local time", "store timestamps
	// as UTC": where or how a kind of data is kept, a rule (a place that
	// is an option, "in Redis", is read as a choice elsewhere).
	if t, lt := cutActually(s, low); (strings.Contains(lt, " in ") || strings.Contains(lt, " as ")) && !pronounLead.MatchString(lt) && !describes.MatchString(lt) {
		if m := keptAs.FindStringSubmatchIndex(lt); m != nil {
			g := 8
			if m[g] < 0 {
				g = 16
			}
			if !hasChoice(t[m[g]:m[g+1]]) {
				r.add(item{kind: "constraint", text: capitalise(strings.TrimRight(t, ".! "))})
				return
			}
		}
	}
	// "make it 5 retries for the webhook sender": a new amount, for the
	// rule it updates (read only as that).
	if m := matchIf(strings.HasPrefix(low, "make it ") || strings.HasPrefix(low, "make that ") || strings.Contains(low, " it to ") || strings.Contains(low, " that to ") || strings.Contains(low, " this to "), newAmount, low); m != nil {
		r.add(item{kind: "constraint", text: capitalise(strings.TrimRight(s, ".! ")), update: true})
		return
	}
	// "Let's add rate limiting: 60 requests per minute per token": a
	// limit named, then its amount per something.
	if m := matchIf(strings.Contains(low, " per "), labelledRate, low); m != nil && !hedge.MatchString(low) {
		r.add(item{kind: "constraint", text: capitalise(s[m[2]:m[3]]) + ": " + s[m[4]:m[5]]})
		return
	}
	// "Make the API stateless": a property the design must keep.
	if m := matchIf(strings.HasPrefix(low, "make ") || strings.Contains(low, " make "), makeProperty, low); m != nil && !hedge.MatchString(low) {
		r.add(item{kind: "constraint", text: capitalise(strings.TrimRight(s[m[2]:m[3]], ".! "))})
		return
	}
	// "raise the retries to 5": a decision of its own, unless a rule in
	// force bounds that thing (updateRules then gives the rule the new
	// amount). Not a release: "bump the version to 1.4.2".
	if m := matchIf(strings.Contains(low, " to "), amountTo, low); m != nil && !hedge.MatchString(low) && !versionThing.MatchString(low[m[4]:m[5]]) {
		r.decision(item{kind: "decision", text: capitalise(strings.TrimRight(s[m[2]:m[3]], ".! "))})
		return
	}
	// "Cap the retries at 5": a limit.
	// "Deploys go through the GitHub Actions workflow only", "nobody runs
	// fly deploy by hand": the one way something is done.
	if m := matchIf(strings.HasSuffix(low, " only") || strings.HasPrefix(low, "nobody ") || strings.HasPrefix(low, "no one "), onlyWay, low); m != nil && !hedge.MatchString(low) {
		r.add(item{kind: "constraint", text: capitalise(s)})
		return
	}
	if m := matchIf(strings.HasPrefix(low, "cap ") || strings.HasPrefix(low, "limit ") || strings.HasPrefix(low, "keep ") && strings.Contains(low, " at ") || strings.HasPrefix(low, "rate") || strings.HasPrefix(low, "throttle ") || strings.HasPrefix(low, "please "), capAt, low); m != nil {
		r.add(item{kind: "constraint", text: capitalise(s)})
		return
	}
	// "mypy strict mode on for the whole package": a check switched on.
	if m := matchIf(strings.Contains(low, " on") || strings.Contains(low, "enabled"), checkOn, low); m != nil {
		r.add(item{kind: "constraint", text: s}) // as written: "mypy strict mode on
		return
	}
	// "No ORM for the reporting queries, plain SQL with psycopg": what is
	// turned down, then what is used instead.
	if m := matchIf(strings.HasPrefix(low, "no ") || strings.HasPrefix(low, "not "), noForThen, low); m != nil && hasChoice(s[m[6]:m[7]]) && !hedge.MatchString(low) && !copula.MatchString(low[m[6]:m[7]]) &&
		!negWord.MatchString(low[m[6]:m[7]]) && !pronounLead.MatchString(low[m[6]:m[7]]) && !reasonish.MatchString(low[m[6]:m[7]]) {
		text := "Use " + s[m[6]:m[7]]
		if m[4] >= 0 {
			text += " for " + s[m[4]:m[5]]
		}
		r.add(item{kind: "reject", text: s[m[2]:m[3]]})
		r.decision(item{kind: "decision", text: text, old: s[m[2]:m[3]], change: change})
		return
	}
	// "For the model itself, LightGBM.", "For auth: magic links only":
	// the option chosen for a part, said after it.
	if m := matchIf(strings.HasPrefix(low, "for "), forPartThen, low); m != nil && !hedge.MatchString(low) && !pronounLead.MatchString(low[m[4]:m[5]]) &&
		!strings.ContainsAny(low[m[4]:m[5]], ",;") && !clauseWord.MatchString(low[m[2]:m[3]]) && !clauseWord.MatchString(low[m[4]:m[5]]) &&
		(bareOption(s[m[4]:m[5]]) || isChoiceWord(firstWord(s[m[4]:m[5]]), false) && len(strings.Fields(s[m[4]:m[5]])) <= 4 ||
			productPart(strings.TrimPrefix(strings.TrimPrefix(low[m[2]:m[3]], "the "), "our ")) && strings.HasSuffix(low, " only") && len(strings.Fields(s[m[4]:m[5]])) <= 4) {
		r.decision(item{kind: "decision", text: "Use " + s[m[4]:m[5]] + " for " + s[m[2]:m[3]], change: change})
		return
	}
	// "Plan for this week: first the baseline model, then SHAP, …, and
	// the dashboard last": a plan said in order after its label.
	if m := matchIf(!r.probe && strings.HasPrefix(low, "plan") && strings.Contains(low, "then "), planFor, low); m != nil {
		if steps := thenSteps(strings.TrimSuffix(strings.TrimRight(s[m[2]:m[3]], ". "), " last")); len(steps) >= 2 {
			if last, tail, ok := strings.Cut(steps[len(steps)-1], ", and "); ok {
				steps = append(steps[:len(steps)-1], last, tail) // "…, then the scoring job, and the dashboard last"
			}
			r.add(item{kind: "plan", steps: steps})
			return
		}
	}
	// "the threshold should be 0.35, not 0.5": a value set, and the one it
	// is not.
	if m := matchIf(strings.Contains(low, " should be "), valueShouldBe, low); m != nil {
		why := ""
		if m[8] >= 0 {
			why = strings.TrimRight(s[m[8]:m[9]], ". ")
		}
		r.decision(item{kind: "decision", text: "The " + s[m[2]:m[3]] + " should be " + s[m[4]:m[5]], why: why, change: change})
		r.add(item{kind: "reject", text: s[m[6]:m[7]]})
		return
	}
	// "the neural net experiment wasn't worth the complexity": an option
	// tried and turned down.
	if m := matchIf(strings.Contains(low, " worth"), notWorthTried, low); m != nil {
		r.add(item{kind: "reject", text: s[m[2]:m[3]], why: "not worth " + strings.TrimRight(s[m[4]:m[5]], ". ")})
		return
	}
	// "Notebooks are for exploration only", "anything that runs on a
	// schedule goes into the package": where things belong.
	if m := matchIf(strings.HasSuffix(low, " only") || strings.HasPrefix(low, "anything ") || strings.HasPrefix(low, "everything "), belongsRule, low); m != nil && !hedge.MatchString(low) && !pronounLead.MatchString(low) {
		r.add(item{kind: "constraint", text: capitalise(s)})
		return
	}
	// "Sidekiq stays": the option kept.
	if m := matchIf(strings.HasSuffix(low, " stays") || strings.HasSuffix(low, " stays as is") || strings.HasSuffix(low, " stays as it is"), optionStays, low); m != nil && bareOption(s[m[2]:m[3]]) {
		r.decision(item{kind: "decision", text: "Keep " + s[m[2]:m[3]], stays: true})
		return
	}
	// "Use a fixed random seed everywhere": a rule for all the code.
	if m := matchIf(strings.HasSuffix(low, " everywhere") && strings.HasPrefix(low, "use "), useEverywhere, low); m != nil && !hedge.MatchString(low) {
		r.add(item{kind: "constraint", text: capitalise(s)})
		return
	}
	// "pg not mysql", "2 spaces not tabs", "Vitest, not Jest": a choice
	// and the option it is not, with no verb.
	if lp := strings.TrimSuffix(strings.TrimSuffix(low, " please"), ","); strings.Contains(lp, " not ") {
		if m := bareNot.FindStringSubmatchIndex(lp); m != nil && (bareOption(s[m[2]:m[3]]) || amountOf(s[m[2]:m[3]])) && bareOption(s[m[4]:m[5]]) {
			r.decision(item{kind: "decision", text: "Use " + s[m[2]:m[3]], old: s[m[4]:m[5]], change: change})
			r.add(item{kind: "reject", text: s[m[4]:m[5]]})
			return
		}
	}
	if m := matchIf(strings.HasSuffix(low, " all") || strings.HasSuffix(low, " right") || strings.HasSuffix(low, " call") ||
		strings.HasSuffix(low, " choice") || strings.HasSuffix(low, " back"), optionBack, low); m != nil && bareOption(s[m[2]:m[3]]) {
		r.decision(item{kind: "decision", text: "Use " + s[m[2]:m[3]], change: true})
		return
	}
	// "k8s only": the one option used.
	if m := matchIf(strings.HasSuffix(low, " only"), optionOnly, low); m != nil && bareOption(s[m[2]:m[3]]) {
		r.decision(item{kind: "decision", text: "Use " + s[m[2]:m[3]] + " only", change: change})
		return
	}
	// "ci = gh actions", "jest -> vitest, jest's esm support is a mess":
	// a part set to an option, an option replaced by another.
	if m := matchIf(strings.ContainsAny(low, "=>→"), arrowForm, low); m != nil {
		from, to := s[m[2]:m[3]], s[m[4]:m[5]]
		why := ""
		if m[6] >= 0 {
			why = strings.TrimRight(s[m[6]:m[7]], ". ")
		}
		switch {
		case strings.Contains(low[m[3]:m[4]], "=") && !strings.Contains(low[m[3]:m[4]], ">") && productPart(lower(from)) && (hasChoice(to) || isChoiceWord(firstWord(to), false)):
			r.decision(item{kind: "decision", text: "Use " + to + " for " + from, why: why, change: change})
			return
		case bareOption(from) && (bareOption(to) || isChoiceWord(firstWord(to), false)):
			r.decision(item{kind: "decision", text: "Use " + to + " instead of " + from, old: from, why: why, change: true})
			return
		}
	}
	// "lets do tf for infra": an option for a part.
	if m := matchIf(strings.HasPrefix(low, "do ") || strings.HasPrefix(low, "let's do "), doFor, low); m != nil && bareOption(s[m[2]:m[3]]) && productPart(lower(s[m[4]:m[5]])) {
		r.decision(item{kind: "decision", text: "Use " + s[m[2]:m[3]] + " for " + s[m[4]:m[5]], change: change})
		return
	}
	// "hard no on canvas, accessibility matters here"
	if m := matchIf(strings.Contains(low, "no on ") || strings.Contains(low, "no to "), hardNo, low); m != nil && !pronounLead.MatchString(low[m[2]:m[3]]) && !stopWords[lower(firstWord(s[m[2]:m[3]]))] {
		r.changed = true
		if m[4] < 0 {
			r.add(item{kind: "reject", text: s[m[2]:m[3]]})
			return
		}
		rest := strings.TrimRight(s[m[4]:m[5]], ". ")
		if !r.probe && r.yields(rest) || !reasonish.MatchString(lower(rest)) && !judgement.MatchString(lower(rest)) {
			// "no to Lerna, we keep the packages in one workspace": what
			// is done instead, read on its own.
			r.add(item{kind: "reject", text: s[m[2]:m[3]]})
			r.statement(rest, true)
			return
		}
		r.add(item{kind: "reject", text: s[m[2]:m[3]], why: rest})
		return
	}
	// "husky yes, but only lint in the hook": the option taken, then how.
	if m := matchIf(strings.Contains(low, " yes"), optionYes, low); m != nil && (bareOption(s[m[2]:m[3]]) || len(strings.Fields(s[m[2]:m[3]])) == 1 && !stopWords[lower(s[m[2]:m[3]])] &&
		!pronounLead.MatchString(low[m[2]:m[3]]) && !interjection.MatchString(low[m[2]:m[3]]+" ") && !notAnOption.MatchString(low[m[2]:m[3]])) {
		r.decision(item{kind: "decision", text: "Use " + s[m[2]:m[3]], change: change})
		if m[4] >= 0 {
			r.statement(s[m[4]:m[5]], change)
		}
		return
	}
	// "only lint in the hook": the one thing done somewhere.
	if m := matchIf(strings.HasPrefix(low, "only "), onlyIn, low); m != nil {
		r.add(item{kind: "constraint", text: capitalise(s)})
		return
	}
	// "let's self-host GlitchTip instead"
	if m := matchIf(strings.Contains(low, "self-host"), selfHost, low); m != nil && isChoiceWord(firstWord(s[m[2]:m[3]]), false) {
		r.decision(item{kind: "decision", text: "Self-host " + s[m[2]:m[3]], change: change || m[4] >= 0})
		return
	}
	// "Outputs go to the analytics schema, never to the production
	// database": where things go, and where they never go.
	if m := matchIf(strings.Contains(low, ", never "), goNever, low); m != nil && !hedge.MatchString(low) {
		r.add(item{kind: "constraint", text: capitalise(s[:m[9]])})
		r.add(item{kind: "constraint", text: capitalise(s[m[2]:m[3]]) + ": " + s[m[9]+2:]}) // "Outputs: never to the production database"
		return
	}
	// "Dates are always UTC in the API and ISO 8601 in JSON": one rule
	// for each place.
	if m := matchIf(strings.Contains(low, " always ") && strings.Contains(low, " and "), alwaysEach, low); m != nil && !hedge.MatchString(low) {
		head := capitalise(s[m[2]:m[3]]) + " " + s[m[4]:m[5]] + " always "
		r.add(item{kind: "constraint", text: head + s[m[6]:m[7]] + " in " + s[m[8]:m[9]]})
		r.add(item{kind: "constraint", text: head + s[m[10]:m[11]] + " in " + s[m[12]:m[13]]})
		return
	}
	// "use CSS grid not flexbox": the comma left out.
	if m := matchIf(strings.Contains(low, " not "), useNot, low); m != nil && !auxWord.MatchString(low[m[2]:m[3]]) &&
		(isChoiceWord(firstWord(s[m[4]:m[5]]), false) || hasChoice(s[m[2]:m[3]]) && len(strings.Fields(s[m[4]:m[5]])) <= 2 && !stopWords[lower(firstWord(s[m[4]:m[5]]))]) &&
		(hasChoice(s[m[2]:m[3]]) || isChoiceWord(firstWord(s[m[2]:m[3]]), false)) {
		s, low = s[:m[3]]+","+s[m[3]:], low[:m[3]]+","+low[m[3]:]
	}
	// "+1 on sqlc, keep it": agreement with an option.
	if m := matchIf(strings.HasPrefix(low, "+1"), plusOne, low); m != nil && bareOption(s[m[2]:m[3]]) {
		r.decision(item{kind: "decision", text: "Use " + s[m[2]:m[3]], stays: true})
		return
	}
	// "we're standardising on slog now"
	if m := matchIf(strings.Contains(low, "standardi"), standardise, low); m != nil && hasChoice(s[m[2]:m[3]]) {
		r.decision(item{kind: "decision", text: "Use " + s[m[2]:m[3]], change: true})
		return
	}
	// "the handler name should be CreateShipment not NewShipment"
	if m := matchIf(strings.Contains(low, " should be "), nameShouldBe, low); m != nil {
		r.decision(item{kind: "decision", text: "Name the " + s[m[2]:m[3]] + " " + s[m[4]:m[5]]})
		if m[6] >= 0 {
			r.add(item{kind: "reject", text: s[m[6]:m[7]]})
		}
		return
	}
	// "I was going to say GraphQL but honestly REST is simpler": the one
	// said first is turned down, for the reason the other is given.
	if m := matchIf(strings.HasPrefix(low, "i was") || strings.HasPrefix(low, "i'd have"), goingToSay, low); m != nil && isChoiceWord(firstWord(s[m[2]:m[3]]), false) {
		rest := s[m[4]:m[5]]
		why := ""
		if judgedWord.MatchString(lower(rest)) {
			why = strings.TrimRight(rest, ". ")
		}
		r.add(item{kind: "reject", text: s[m[2]:m[3]], why: why})
		n := len(r.items)
		r.statement(capitalise(rest), true)
		if len(r.items) == n && why != "" {
			r.pendingWhy = why // for the choice said next ("REST it is")
		}
		return
	}
	// A brief's imperatives that name what is used: "Build the admin
	// dashboard with Go templates + htmx", "Run it as a Cloud Run job",
	// "Expose Prometheus metrics".
	if m := matchIf(!r.probe && briefLead(low), briefVerb, low); m != nil && hasChoice(s[m[2]:m[3]]) {
		r.decision(item{kind: "decision", text: capitalise(strings.TrimRight(s, ". "))})
		return
	}
	if m := topicLead.FindStringSubmatchIndex(low); m != nil {
		r.statement(s[m[2]:], change)
		return
	}
	if m := judgeComma.FindStringSubmatchIndex(low); m != nil && judgement.MatchString(low[:m[3]]) {
		n := len(r.items)
		r.statement(capitalise(strings.TrimPrefix(s[m[4]:], "just ")), true)
		r.attach(seq(n, len(r.items)), s[:m[3]])
		r.replacing(n, s[:m[3]]) // "Celery is too much …, just use cron"
		return
	}
	// "step 1 is done", "the backfill step is finished": a step of the
	// plan completed.
	if m := matchIf(strings.Contains(low, "step"), stepDone, low); m != nil {
		r.add(item{kind: "done", text: low[max(m[2], m[4]):max(m[3], m[5])]})
		return
	}
	// "Skip the Dockerfile step", "drop step 4": a step of the plan cancelled.
	if m := skipStep.FindStringSubmatchIndex(low); m != nil {
		for g := 1; 2*g < len(m); g++ {
			if m[2*g] >= 0 {
				r.add(item{kind: "skip", text: low[m[2*g]:m[2*g+1]]})
				break
			}
		}
		return
	}
	// "I changed my mind about pandas, use Polars": the option the mind
	// changed about is dropped, and what follows is the change.
	if m := mindAbout.FindStringSubmatchIndex(low); m != nil {
		if opt := s[m[2]:m[3]]; isChoiceWord(firstWord(opt), false) && len(strings.Fields(opt)) <= 3 {
			r.add(item{kind: "reject", text: opt})
		}
		r.statement(capitalise(s[m[4]:]), true)
		return
	}
	// Labels.
	if m := labelRe.FindStringSubmatchIndex(low); m != nil && m[5] > m[4] {
		label, body := low[m[2]:m[3]], strings.TrimSpace(s[m[4]:m[5]])
		switch labelKind(label) {
		case "decision":
			if strings.Contains(label, "changed") {
				change = true
			}
			if b, ok := strings.CutPrefix(body, "to "); ok { // "The decision is to ship …"
				body = capitalise(b)
			}
			if tm := labelTopic.FindStringIndex(lower(body)); tm != nil {
				// "final answer on background jobs: Sidekiq stays, …"
				r.statement(body[tm[1]:], change)
				return
			}
			r.decisionBody(body, change)
			return
		case "change":
			r.statement(body, true)
			return
		case "constraint":
			for _, p := range splitRules(body) {
				r.add(item{kind: "constraint", text: p})
			}
			return
		case "reject":
			r.rejectList(body)
			return
		case "plan":
			return // a plan wants enumerated steps
		}
	}
	if m := settledLabel.FindStringSubmatchIndex(low); m != nil {
		r.decisionBody(strings.TrimSpace(s[m[2]:m[3]]), change)
		return
	}
	if m := soThen.FindStringSubmatchIndex(low); m != nil && !r.probe && !hedge.MatchString(low[:m[3]]) && !questionLead.MatchString(low) {
		// "the platform team will only support Airflow, so Airflow it
		// is": what the tail settles, for the reason the head gives.
		if head, tail := s[m[2]:m[3]], s[m[4]:m[5]]; !r.yields(head) && r.yields(tail) {
			n := len(r.items)
			r.statement(tail, change)
			r.attach(seq(n, len(r.items)), strings.TrimRight(head, ", "))
			return
		}
	}
	if loc := neverTail.FindStringIndex(low); loc != nil && !pronounLead.MatchString(low) && !hedge.MatchString(low) && !oneOff.MatchString(low) {
		// "secrets go through Secret Manager, never in profiles.yml": a
		// rule. Said as an instruction ("For file uploads use presigned
		// URLs, never through the app server"), the instruction is a
		// decision and the tail its rule.
		if head := s[:loc[0]]; imperLead.MatchString(lower(head)) || topicLead.MatchString(lower(head)) {
			r.statement(head, change)
			r.add(item{kind: "constraint", text: capitalise(strings.TrimLeft(s[loc[0]:], ", "))})
			return
		}
		r.add(item{kind: "constraint", text: s})
		return
	}
	if r.chatForms(s, low, change) {
		return
	}
	// Clauses split at ";".
	if i := strings.Index(s, ";"); i > 0 {
		first := len(r.items)
		r.statement(s[:i], change)
		rest := strings.TrimSpace(s[i+1:])
		n := len(r.items)
		r.statement(rest, change || r.changed) // "No Webpack; just esbuild"
		if len(r.items) == n && reasonish.MatchString(lower(rest)) {
			r.attach(r.last, rest)
		}
		for k := n; k < len(r.items); k++ {
			// "Drop Viper, it pulls in half the internet; plain flags":
			// the reason for the drop is the reason for the change.
			if it := &r.items[k]; it.kind == "decision" && it.why == "" {
				for _, j := range seq(first, n) {
					if r.items[j].kind == "reject" && r.items[j].why != "" {
						it.why = r.items[j].why
					}
				}
			}
		}
		if n == first && len(r.items) > n && judgement.MatchString(lower(s[:i])) {
			// "Pandas is too slow; we'll use Polars."
			r.attach(seq(n, len(r.items)), s[:i])
		}
		return
	}
	// "10 s for the upstream API, 30 s for the report export": amounts
	// set for parts, each a limit.
	if label, body := amounts(s); body != "" {
		for _, p := range strings.Split(body, ", ") {
			r.add(item{kind: "constraint", text: label + strings.TrimPrefix(strings.TrimSpace(p), "and ")})
		}
		return
	}
	// "TypeScript for the frontend, Go for the backend": options named for
	// parts of the product, with no verb.
	if pairs := forPairs(s); pairs != nil {
		for _, p := range pairs {
			r.decision(item{kind: "decision", text: "Use " + p, change: change})
		}
		return
	}
	if choice, judged := cutJudgement(s); judged != "" {
		if pairs := forPairs(choice); pairs != nil {
			// "ClickHouse for the ingest store, Postgres can't keep up"
			for _, p := range pairs {
				r.decision(item{kind: "decision", text: "Use " + p, why: judged, change: change})
			}
			return
		}
	}
	// "Use gofmt and keep functions under 50 lines": two instructions,
	// each read on its own.
	if loc := imperAnd.FindStringSubmatchIndex(low); loc != nil && imperLead.MatchString(low) {
		r.statement(s[:loc[0]], change)
		r.statement(capitalise(s[loc[2]:]), change)
		return
	}
	if change && perRule.MatchString(low) {
		// "no, one consumer group per topic": a layout said as a
		// correction replaces the layout decided before.
		r.decisionBody(s, true)
		return
	}
	if r.decisionForms(s, low, change, decided) || r.rejectForms(s, low) || r.constraintForms(s, low) {
		return
	}
	// A bare choice after a change marker or with "that's final":
	// "Correction: CI runs on Buildkite", "Apache-2.0 license. That's final".
	if (change || decided) && (hasChoice(s) || insteadNamed(s, low)) && !strings.ContainsAny(low, "?") && !pronounLead.MatchString(low) && !judgement.MatchString(low) && !stepNumber.MatchString(low) &&
		!(reasonClause.MatchString(low) && negModal.MatchString(low)) { // "the browser client can't do raw UDP anyway": a reason
		r.decisionBody(s, change)
		return
	}
	// "Ask me before deleting files", "commit after each step",
	// "everything has to run offline", "use conventional commits": how
	// the work is done, a rule, when no form above read the sentence
	// otherwise (a wish as vague as "keep functions short" is none).
	if workPractice.MatchString(low) && !hedge.MatchString(low) && !strings.Contains(low, "?") {
		r.add(item{kind: "constraint", text: capitalise(s)})
		return
	}
	// "Primary keys are UUIDv7", "pagination is cursor-based": what a
	// part of the design is, when that is a named thing or a kind of it
	// and no form above read it otherwise; not a report ("the problem is CORS", "the deadline is Friday").
	if m := matchIf(strings.Contains(low, " is ") || strings.Contains(low, " are "), partIsNamed, low); m != nil && !hedge.MatchString(low) && !pronounLead.MatchString(low) &&
		!reportSubject.MatchString(low[m[2]:m[3]]) && !stopWords[low[m[4]:m[5]]] {
		if what := strings.TrimRight(s[m[4]:m[5]], ".!"); isNamed(what) || kindSuffix.MatchString(lower(what)) {
			r.decision(item{kind: "decision", text: capitalise(strings.TrimRight(s, ".! "))})
			return
		}
	}
	// "Never mind, forget GORM, back to sqlc": clauses read one by one,
	// unless the first sets a condition ("if the build fails, use Bazel").
	// "Postgres for now, not DuckDB": "for now" qualifies the choice
	// before the comma; it does not make the sentence a one-off.
	if parts := strings.Split(s, ", "); len(parts) >= 2 && len(parts) <= 5 && !conditionLead.MatchString(low) && !oneOff.MatchString(strings.Replace(low, " for now, ", ", ", 1)) && !remark.MatchString(low) {
		first := len(r.items)
		defer func() {
			// "Postgres for now, not Elasticsearch — one less cluster to
			// run": the reason said last is the choice's as well.
			if k := len(r.items) - 1; k > first && r.items[k].kind == "reject" && r.items[k].why != "" {
				for j := first; j < k; j++ {
					if r.items[j].kind == "decision" && r.items[j].why == "" {
						r.items[j].why = r.items[k].why
					}
				}
			}
		}()
		for _, p := range parts {
			if len(p) > 4 && strings.EqualFold(p[:4], "and ") {
				p = p[4:] // "…, and mypy in strict mode"
			}
			if n := len(r.items); n > 0 && r.items[n-1].kind == "reject" && r.items[n-1].why == "" &&
				handledBy.MatchString(lower(p)) && r.decidedHere(firstWord(p)) {
				// "Click directly is a no-go, Typer gives us the help for
				// free", Typer decided before in the turn: why, not a change.
				r.items[n-1].why = strings.TrimRight(p, ". ")
				continue
			}
			if n := len(r.items); n > 0 && r.items[n-1].kind == "reject" && bareOption(strings.TrimPrefix(p, "plain ")) {
				// "not a fan of Tailwind for this, plain CSS modules": the
				// option taken instead of the one just turned down.
				r.decision(item{kind: "decision", text: "Use " + strings.TrimRight(p, ".! "), change: change})
				continue
			}
			r.statement(p, change || r.changed)
		}
	}
}

// beforeReason is a statement up to the reason it gives, if any: a hedge
// in the reason ("…, we want async later") leaves the statement settled.
func beforeReason(low string) string {
	for _, loc := range reasonSep.FindAllStringIndex(low, -1) {
		if loc[0] > 0 && strings.HasPrefix(low[loc[0]:], ", we want") {
			return low[:loc[0]]
		}
	}
	if loc := guessedReason.FindStringIndex(low); loc != nil && loc[0] > 0 {
		return low[:loc[0]] // "let's drop the feature, I think it leaks the label"
	}
	return low
}

// beforeDash is low up to its first " — ", which sets off a reason or a
// remark: a history told there ("— the licensing mess last year was
// enough") does not make the choice before it a report.
func beforeDash(low string) string {
	if i := strings.Index(low, " — "); i > 0 {
		return low[:i]
	}
	return low
}

// guessedReason: a reason given as a guess after what is settled.
var guessedReason = mustPattern(`,\s+(?:i think|i guess|i suspect|probably because)\s+(?:it|that|this|they|the)\b`)

// decidedHere reports whether a decision read earlier in the turn names
// the option w.
func (r *reader) decidedHere(w string) bool {
	w = lower(strings.Trim(w, ".,"))
	if len(w) < 2 {
		return false
	}
	for _, it := range r.items {
		if it.kind == "decision" && slices.Contains(words(it.text), w) {
			return true
		}
	}
	return false
}

// packageName reports whether s, after "pull in" or "depend on", is one
// word that names a package ("viper", "lodash"), not a pronoun or a
// common word ("it", "more").
func packageName(s string) bool {
	return packageWord.MatchString(s) && !stopWords[s] && !pronounLead.MatchString(s) && !genericDep[s]
}

var (
	addVerb     = mustPattern(`^(?:don'?t|do not|let'?s not|we won'?t|we will not|never)\s+add\b`) // "let's not add tests": not a package
	packageWord = mustPattern(`^[a-z][a-z0-9]*(?:[.\-/][a-z0-9]+)*$`)
	genericDep  = map[string]bool{"anything": true, "more": true, "another": true, "new": true, "extra": true, "any": true, "everything": true, "stuff": true, "things": true, "deps": true, "dependencies": true, "libraries": true, "packages": true}
)

// restOfInput: what a rule about input turns away ("anything else").
var restOfInput = mustPattern(`^(?:anything|everything|whatever|all|any)\s+(?:else|other|others|that|which|not)\b|^(?:the rest|all the rest|the others|other (?:values|inputs|requests|codes))\b|\s(?:on|in|for|from)\s+(?:every|each|all|any)\s`)

var pronounLead = mustPattern(`^(?:i|you|we|it|that|this|there|please|let|can|the bug|the test|the file)\b`)

// decisionForms reads the unlabelled ways of stating a decision.
func (r *reader) decisionForms(s, low string, change, decided bool) bool {
	match, sub := matcher(s, low)
	switch {
	case match(holdOff) && len(strings.Fields(sub(holdOff, 1))) <= 4 && (hasChoice(sub(holdOff, 1)) || isNamed(sub(holdOff, 1)) ||
		heldUntil.MatchString(lower(sub(holdOff, 2))) && !pronounLead.MatchString(lower(sub(holdOff, 1))) && !taskWord.MatchString(lower(sub(holdOff, 1)))):
		// "hold off on the semantic layer until the core marts are
		// stable": a part of the product put off, with its condition.
		// Put off: turned down for now, not a decision.
		r.add(item{kind: "reject", text: sub(holdOff, 1), why: strings.TrimRight(sub(holdOff, 2), ". ")})
	case match(decidedAgst) && restOfInput.MatchString(lower(firstNonEmpty(sub(decidedAgst, 1), sub(decidedAgst, 2)))):
		// "reject anything else with a 400", "reject unknown fields on
		// every request type": how the service answers input, not an
		// option turned down.
		if strings.Contains(" "+lower(firstNonEmpty(sub(decidedAgst, 1), sub(decidedAgst, 2)))+" ", " every ") || strings.Contains(" "+lower(firstNonEmpty(sub(decidedAgst, 1), sub(decidedAgst, 2)))+" ", " each ") {
			r.add(item{kind: "constraint", text: capitalise(s)})
			break
		}
		r.decision(item{kind: "decision", text: capitalise(s), change: change})
	case match(decidedAgst):
		r.rejectList(firstNonEmpty(sub(decidedAgst, 1), sub(decidedAgst, 2)))
	case match(optionsNo) && optionPhrase(sub(optionsNo, 1)):
		// "HTMX + Alpine, no React", "Tailwind via the standalone CLI, no
		// node in the build": options named without a verb, and what is
		// turned down (an option) or ruled out (somewhere).
		r.decisionBody("Use "+sub(optionsNo, 1), change)
		if no := strings.TrimRight(sub(optionsNo, 2), ". "); placeWord.MatchString(" "+lower(no)+" ") || practiceWord.MatchString(lower(no)) {
			r.add(item{kind: "constraint", text: "no " + no})
		} else {
			r.rejectList(no)
		}
	case match(decidedTo):
		body := sub(decidedTo, 2)
		lb := lower(body)
		switch {
		case personal.MatchString(lb) && strings.EqualFold(sub(decidedTo, 1), "i"):
			// A break, not a project decision.
		case strings.HasPrefix(lb, "not "):
			r.statement("Don't "+body[len("not "):], change) // "we decided to not use Kafka"
		default:
			r.decisionBody(capitalise(body), change)
		}
	case match(keepVerb) && (hasChoice(sub(keepVerb, 1)) || keepPlace.MatchString(lower(sub(keepVerb, 1)))):
		obj := sub(keepVerb, 1)
		if loc := andVerb.FindStringSubmatchIndex(lower(obj)); loc != nil && hasChoice(obj[:loc[0]]) && hasChoice(obj[loc[2]:]) {
			// "Let's keep product data in Postgres and cache the catalog
			// in Redis": two decisions.
			r.decisionBody("Keep "+obj[:loc[0]], change)
			r.decisionBody(capitalise(obj[loc[2]:]), change)
			break
		}
		r.decisionBody("Keep "+obj, change)
	case match(revertForm):
		old, back := sub(revertForm, 1), sub(revertForm, 2)
		if back == "" {
			r.rejectList(old)
			break
		}
		r.decision(item{kind: "decision", text: "Use " + back + " (instead of " + old + ")", old: old, change: true})
	case match(backTo) && (hasChoice(sub(backTo, 1)) || isNamed(firstWord(sub(backTo, 1)))):
		body, rest, _ := strings.Cut(sub(backTo, 1), "; ")
		if m := whatWeHad.FindStringIndex(lower(body)); m != nil && m[1] < len(body) {
			body = body[m[1]:] // "go back to what we had before, SQS"
		}
		r.decisionBody("Use "+body, true)
		if rest != "" {
			r.statement(rest, false) // "…; anyhow only in the binary"
		}
	case match(replaceWith) && (strings.Contains(low, " with ") || isNamed(sub(replaceWith, 2)) || isOption(sub(replaceWith, 2))):
		// "replace winston by pino"; not "replace the handler by friday".
		old, body := sub(replaceWith, 1), sub(replaceWith, 2)
		body, remark := cutOldRemark(body, old) // "…, Jest chokes on ESM"
		body, why := splitReason(body)          // "…, we don't need the extra moving parts"
		r.decision(item{kind: "decision", text: "Use " + body + " instead of " + old, old: old, why: firstNonEmpty(why, remark), change: true})
	case match(switchTo) && someday.MatchString(low):
		// "we'll switch to a binary format if they get big": a change for
		// a day that may come, not made.
		return false
	case match(switchTo) && releaseBump.MatchString(low):
		// "bump the version to 1.4.2": a release, not a choice.
		return false
	case match(switchTo) && moveOn.MatchString(lower(sub(switchTo, 1))):
		// "move on to the renderer": the next piece of work, not a choice.
		return false
	case match(switchTo) && !strings.HasPrefix(sub(switchTo, 3), "the ") || match(switchTo) && sub(switchTo, 1) != "":
		subject, old, to := sub(switchTo, 1), sub(switchTo, 2), sub(switchTo, 3)
		subject = strings.TrimSuffix(strings.TrimSuffix(subject, " over"), " back") // "move the catalog over to …"
		if old == "" && categoryOf[lower(bare(subject))] != "" && !strings.Contains(subject, " ") {
			// "switch reqwest to ureq": the option switched from, not
			// the part switched.
			subject, old = "", subject
		}
		to, judged := cutJudgement(to)
		if judged == "" {
			to, judged = cutOldRemark(to, old)
		}
		to, why := splitReason(to)
		why = firstNonEmpty(why, judged)
		to, folded := foldOld(to)
		old = firstNonEmpty(old, folded)
		text := "Use " + to
		if subject != "" {
			text += " for " + subject
		}
		if old != "" {
			text += " (instead of " + old + ")"
		}
		r.decision(item{kind: "decision", text: text, old: old, why: why, change: true})
	case match(swapFor) && isNamed(sub(swapFor, 1)) && len(strings.Fields(sub(swapFor, 1))) <= 4:
		r.replaced(sub(swapFor, 1), sub(swapFor, 2))
	case match(buildOn) && isNamed(sub(buildOn, 1)):
		r.decisionBody("Build on "+sub(buildOn, 1), change)
	case match(partInWith) && productPart(lower(sub(partInWith, 1))) && (categoryOf[lower(sub(partInWith, 2))] != "" || lower(sub(partInWith, 2)) == "go") && isNamed(sub(partInWith, 3)):
		r.decisionBody("Use "+sub(partInWith, 2)+" with "+sub(partInWith, 3)+" for the "+lower(sub(partInWith, 1)), change)
	case match(talkOver) && categoryOf[lower(sub(talkOver, 2))] != "":
		r.decisionBody("Use "+sub(talkOver, 2)+" to talk to "+sub(talkOver, 1), change)
		if rest := sub(talkOver, 3); rest != "" {
			r.statement(rest, change)
		}
	case match(staysOption) && productPart(lower(sub(staysOption, 1))) && categoryOf[lower(sub(staysOption, 2))] != "":
		r.decisionBody("Keep "+sub(staysOption, 2)+" for the "+sub(staysOption, 1), change)
	case match(ownsPart) && categoryOf[lower(sub(ownsPart, 1))] != "" && productPart(lower(sub(ownsPart, 2))):
		r.decisionBody("Use "+sub(ownsPart, 1)+" for "+lower(sub(ownsPart, 2)), change)
	case match(partIn) && productPart(lower(sub(partIn, 1))) && !troubleWord[lastWord(lower(sub(partIn, 1)))] && !pronounLead.MatchString(lower(sub(partIn, 1))) && (categoryOf[lower(sub(partIn, 2))] != "" || sub(partIn, 2) == "Go") && !describes.MatchString(low):
		// Not "errors in Postgres" nor "we keep state in S3".
		why, rest := strings.TrimRight(sub(partIn, 3), ". "), ""
		if why != "" && !reasonLead.MatchString(lower(why)) {
			why, rest = "", why // "Ingestion service in Go, it subscribes to the broker"
		}
		part := lower(sub(partIn, 1))
		if loc := writePart.FindStringIndex(part); loc != nil {
			part = part[loc[1]:] // "Write the CLI in Rust": the CLI
		}
		old := ""
		if o, ok := strings.CutPrefix(why, "not "); ok && len(strings.Fields(o)) <= 3 {
			why, old = "", o // "Put secrets in Doppler, not .env files"
		}
		r.decision(item{kind: "decision", text: "Use " + sub(partIn, 2) + " for " + part, why: why, old: old, change: change})
		if old != "" {
			r.add(item{kind: "reject", text: old})
		}
		if rest != "" {
			r.statement(capitalise(rest), change)
		}
	case match(partColonVia) && qualifiedPart(lower(sub(partColonVia, 1))) && isNamed(sub(partColonVia, 2)):
		r.decisionBody(capitalise(s), change)
	case match(partColon) && qualifiedPart(lower(sub(partColon, 1))) && namedOrPackage(sub(partColon, 2)):
		r.decisionBody("Use "+sub(partColon, 2)+" for "+lowerPart(sub(partColon, 1)), change)
		if rest := sub(partColon, 3); rest != "" {
			r.statement(capitalise(rest), change) // "…, the API never touches the bytes"
		}
	case match(partColonEach) && productPart(lower(sub(partColonEach, 1))) && r.eachPlaced(sub(partColonEach, 1), sub(partColonEach, 2), change):
	case match(dropAndGo) && isNamed(sub(dropAndGo, 1)) && len(strings.Fields(sub(dropAndGo, 1))) <= 4:
		r.replaced(sub(dropAndGo, 1), sub(dropAndGo, 2))
	case strings.HasSuffix(low, " instead") && insteadImper.MatchString(low):
		// "cache the unlocked key in the agent process instead"
		r.decisionBody(capitalise(s), true)
	case match(bestFitThenIt) && (bareOption(sub(bestFitThenIt, 1)) || isNamed(sub(bestFitThenIt, 1))):
		r.decisionBody("Use "+sub(bestFitThenIt, 1), change) // "Redis seems like the best fit, let's go with it"
	case match(goWith) && yourProposal.MatchString(lower(sub(goWith, 1))):
		// "go with your recommendation": what the assistant proposed,
		// read from its message (accepts), not a choice named "your
		// recommendation".
		return false
	case match(goWith):
		r.decisionBody("Use "+sub(goWith, 1), change)
	case strings.HasPrefix(low, "go for ") && goPart.MatchString(low[len("go for "):]):
		// "Go for the backend, Postgres for storage": the language, for
		// a part of the product (read again, so that a list splits).
		r.statement("Use Go for "+s[len("go for "):], change)
	case match(goFor) && (hasChoice(sub(goFor, 1)) || isNamed(firstWord(sub(goFor, 1)))) && !pronounLead.MatchString(lower(sub(goFor, 1))):
		r.decisionBody("Use "+sub(goFor, 1), change)
	case match(needAgain) && (change || anymore.MatchString(low)) && (hasChoice(sub(needAgain, 1)) || isChoiceWord(firstWord(sub(needAgain, 1)), false)) && !strings.HasPrefix(lower(sub(needAgain, 1)), "to "):
		obj := strings.TrimSuffix(strings.TrimSuffix(sub(needAgain, 1), " after all"), " again")
		if base, ok := strings.CutSuffix(obj, " support"); ok {
			r.decisionBody("Support "+base, true) // "we need Windows support after all"
			break
		}
		r.decisionBody("Use "+obj, true)
	case match(imperChoice) && (hasChoice(sub(imperChoice, 2)) || inChoice(sub(imperChoice, 2))) && !oneOff.MatchString(low) && !soThat.MatchString(low):
		if v := lower(sub(imperChoice, 1)); v == "target" && !isNamed(firstWord(sub(imperChoice, 2))) {
			return false // "Target 60 fps": a requirement, read as one elsewhere
		} else if v == "pick" || v == "choose" {
			if !isNamed(firstWord(sub(imperChoice, 2))) && !hasChoice(firstWord(sub(imperChoice, 2))) {
				return false // "pick the cheaper one", "choose a name"
			}
			r.decisionBody("Use "+sub(imperChoice, 2), change)
			break
		}
		return r.decisionForms("Let's "+s, "let's "+low, change, decided)
	case match(stickWith):
		if obj := sub(stickWith, 1); !pronounLead.MatchString(lower(obj)) && !strings.HasPrefix(lower(obj), "me") {
			n := len(r.items)
			r.decisionBody("Use "+obj, change)
			for i := n; i < len(r.items); i++ {
				r.items[i].stays = r.items[i].kind == "decision"
			}
		}
	case match(itIs):
		r.decisionBody("Use "+sub(itIs, 1), change)
	case match(willVerb) && (plainVerbs[lower(sub(willVerb, 1))] || namesChoice(lower(sub(willVerb, 1)), sub(willVerb, 2)) || inChoice(sub(willVerb, 2))) && !rollOwn.MatchString(low):
		verb, obj := lower(sub(willVerb, 1)), sub(willVerb, 2)
		if b, ok := verbBase[verb]; ok {
			verb = b
		}
		if loc := doItIn.FindStringIndex(obj); loc != nil && (verb == "use" || verb == "write" || verb == "build" || verb == "make") && inChoice(obj) {
			verb, obj = "use", obj[loc[1]:] // "we'll do it in Go with chi", "we're making this in Godot 4"
		} else if verb == "make" {
			return false // "we're making progress"
		}
		// "Let's use chi for routing and store links in SQLite": two
		// decisions, each replaceable on its own.
		if verb == "run" && (runTask.MatchString(lower(obj)) || !hasChoice(obj)) {
			// "let's run the tests with pytest", "let's run the app with
			// the devtools open": a task
			return false
		}
		if lo := lower(obj); (genericUse.MatchString(lo) || pronounLead.MatchString(lo) || toolFor.MatchString(lo) || shouldLead.MatchString(low)) && !hasChoice(obj) && !(verb == "use" && (obj == "Go" || strings.HasPrefix(obj, "Go "))) {
			// "let's use a simpler approach here", "let's store this in a
			// variable first", "let's use the debugger to step through it";
			// "use Go" names the language, which isChoiceWord cannot tell
			// from the verb
			return false
		}
		if loc := andVerb.FindStringSubmatchIndex(lower(obj)); loc != nil && hasContent(obj[:loc[0]]) {
			r.decisionBody(capitalise(verb)+" "+obj[:loc[0]], change)
			r.statement("let's "+obj[loc[2]:], change)
			break
		}
		if loc := ellipsis.FindStringSubmatchIndex(obj); loc != nil && (isChoiceWord(firstWord(obj), false) || hasChoice(obj[:loc[0]])) && isChoiceWord(firstWord(obj[loc[2]:]), false) {
			// "use Airflow for scheduling and dbt for the transforms"
			r.decisionBody(capitalise(verb)+" "+obj[:loc[0]], change)
			r.decisionBody(capitalise(verb)+" "+obj[loc[2]:], change)
			break
		}
		r.decisionBody(capitalise(verb)+" "+obj, change)
	case match(fromNowOn):
		body := sub(fromNowOn, 1)
		if !strings.HasPrefix(lower(body), "use ") {
			// "From now on, all endpoints need auth", "From now on, write
			// tests first": a standing rule.
			if !standingRule.MatchString(lower(body)) && !ruleVerbs[lower(firstWord(body))] {
				return false
			}
			r.add(item{kind: "constraint", text: capitalise(strings.TrimRight(body, ".! "))})
			return true
		}
		r.decisionBody(capitalise(body), change)
	case match(liveIn) && !describes.MatchString(low) && !liveNot.MatchString(low) && !oneOff.MatchString(low) && !neverIn.MatchString(low) && (categoryOf[lower(strings.Trim(lastWord(s), ".,"))] != "" || categoryOf[wordAfter(low, " live in ")] != "" || categoryOf[wordAfter(low, " lives in ")] != ""):
		// "Embeddings live in pgvector": the place is a well-known option.
		r.partDecision(capitalise(s), change)
	case change && match(liveIn) && !liveNot.MatchString(low) && foldedAway(s):
		// "On second thought, credentials come from the OS keyring, not a
		// .env file": a convention changed is a decision replaced.
		r.decisionBody(capitalise(s), true)
	case match(verbWith) && !verbWithNot.MatchString(lower(sub(verbWith, 2))) && isChoiceWord(strings.Trim(sub(verbWith, 3), ",."), false) && (categoryOf[lower(strings.Trim(sub(verbWith, 3), ",."))] != "" || change || anymore.MatchString(low) || imperVerb.MatchString(lower(sub(verbWith, 2))) && isNamed(sub(verbWith, 3))):
		r.decisionBody(capitalise(sub(verbWith, 1)), change)
	case match(imperIn) && imperVerb.MatchString(lower(sub(imperIn, 2))) && categoryOf[lower(strings.TrimRight(sub(imperIn, 3), ".!"))] != "" && !oneOff.MatchString(beforeAnd(low)) && !soThat.MatchString(low):
		if i := strings.Index(low, ", and "); i > 0 {
			// "Align with bwa-mem2, and call variants with DeepVariant",
			// "Deliver with HLS, and keep DASH out of it for now": the
			// instruction, then what follows read on its own.
			r.decisionBody(capitalise(s[:i]), change)
			r.statement(s[i+6:], change)
			break
		}
		r.decisionBody(capitalise(s), change)
	case match(weAreOn) && (change || strings.Contains(low, " now")):
		r.decisionBody("Use "+sub(weAreOn, 1), true)
	case match(useImper) && strings.HasSuffix(low, " again") && len(low) == len(s):
		// "Use Jest again": an option taken back up.
		return r.decisionForms(s[:len(s)-len(" again")], low[:len(low)-len(" again")], true, decided)
	case match(useImper) && len(low) == len(s) && useTail.MatchString(low):
		// "use fastify anyway", "use redis then": the choice, said on.
		k := useTail.FindStringSubmatchIndex(low)[2]
		return r.decisionForms(s[:k], low[:k], change, decided)
	case match(useImper):
		body := sub(useImper, 1)
		lb := lower(body)
		if loc := ellipsis.FindStringSubmatchIndex(body); loc != nil && isChoiceWord(firstWord(body), false) && isChoiceWord(firstWord(body[loc[2]:]), false) {
			// "Use Terraform for infra and Ansible for provisioning"
			r.decisionBody("Use "+body[:loc[0]], change)
			r.decisionBody("Use "+body[loc[2]:], change)
			break
		}
		if m := useNamed.FindStringSubmatchIndex(low); m != nil && (categoryOf[low[m[2]:m[3]]] != "" || isNamed(s[m[2]:m[3]])) {
			r.decisionBody(capitalise(s), change) // "use zerolog for logging"
			break
		}
		if w := lower(bare(firstWord(body))); strings.ContainsAny(w, "-.") && packageName(w) && w != "e.g" && w != "i.e" && !oneOff.MatchString(low) {
			r.decisionBody(capitalise(s), change) // "use pg-boss, we already have postgres", "use date-fns"
			break
		}
		if techToken(firstWord(body)) && !oneOff.MatchString(low) {
			r.decisionBody(capitalise(s), change) // "Use bf16 mixed precision on the A100s"
			break
		}
		if twoWordName.MatchString(s) && !stopWords[lower(firstWord(body))] && !oneOff.MatchString(low) {
			r.decisionBody(capitalise(s), change) // "Use Cohere Rerank for reranking", "Use Google Cloud"
			break
		}
		if stdLib.MatchString(lb) && !oneOff.MatchString(low) {
			r.decisionBody(capitalise(s), change) // "Use the stdlib only", "Use the standard library flag package"
			break
		}
		if rest, ok := strings.CutPrefix(body, "the "); ok && namedAfterThe(rest) && !oneOff.MatchString(low) && !theToolTo.MatchString(lb) {
			r.decisionBody(capitalise(s), change) // "Use the Stripe API for payments", "Use the OS Keychain"
			break
		}
		if !(change || decided || strings.Contains(lb, " instead of ") || strings.Contains(lb, " rather than ") ||
			strings.Contains(lb, ", not ") || strings.Contains(lb, "from now on") || strings.Contains(lb, "for this repo") ||
			strings.Contains(lb, " for all ") || strings.Contains(lb, "everywhere") || strings.Contains(lb, "going forward")) {
			return false
		}
		r.decisionBody(s, change)
	case match(preferOver) && hasChoice(sub(preferOver, 1)+" "+sub(preferOver, 2)):
		r.decisionBody("Prefer "+sub(preferOver, 1)+" over "+sub(preferOver, 2), change)
	case (strings.Contains(low, " as the ") || strings.Contains(low, " as our ")) && match(asPart) && isNamed(sub(asPart, 1)) && !pronounLead.MatchString(low):
		r.decisionBody("Use "+s, change)
	case match(winsForm) && knownOption(sub(winsForm, 1)):
		body := "Use " + sub(winsForm, 1)
		if rest := sub(winsForm, 2); rest != "" {
			body += ", " + rest
		}
		r.decisionBody(body, change)
	case match(bringBack) && knownOption(firstNonEmpty(sub(bringBack, 1), sub(bringBack, 2))):
		opt := firstNonEmpty(sub(bringBack, 1), sub(bringBack, 2))
		text := "Use " + opt
		if part := sub(bringBack, 3); part != "" {
			text += " for " + part // "Bring MediaLive back for ingest"
		}
		if k := slices.IndexFunc(r.items, func(it item) bool { return it.kind == "decision" && it.text == "Use "+opt }); k >= 0 {
			r.items[k].text = text // "I was wrong to drop MediaLive, … Bring MediaLive back for ingest."
			break
		}
		r.decision(item{kind: "decision", text: text, why: strings.TrimRight(sub(bringBack, 4), ". "), change: true, stays: true})
	case optionPhrase(s) && strings.ContainsAny(s, "+&") || optionPhrase(s) && (strings.Contains(low, " with ") || strings.Contains(low, " and ")) && len(strings.Fields(s)) <= 5 && !strings.Contains(s, ","):
		// "pnpm workspaces with Turborepo", "HTMX + Alpine": options named
		// together without a verb.
		r.decisionBody("Use "+s, change)
	case match(onlyOption) && isNamed(sub(onlyOption, 1)) && !stopWords[lower(sub(onlyOption, 1))]:
		r.decisionBody("Use "+sub(onlyOption, 1)+" only", change)
	case match(rollOwn) && !pronounLead.MatchString(lower(sub(rollOwn, 1))):
		body, why := s, ""
		if loc := wholePoint.FindStringIndex(lower(s)); loc != nil {
			body, why = s[:loc[0]], strings.TrimLeft(s[loc[0]:], ", ")
		}
		n := len(r.items)
		if lb := lower(sub(rollOwn, 1)); strings.HasPrefix(lb, "with ") || strings.HasPrefix(lb, "on ") {
			// "we'll run our own with the account service"
			r.decision(item{kind: "decision", text: capitalise(strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(body, "we'll "), "we "), "We ")), change: change})
		} else {
			r.decisionBody(capitalise(strings.TrimPrefix(strings.TrimPrefix(body, "we "), "We ")), change)
		}
		r.attach(seq(n, len(r.items)), why)
	case match(defaultIs) && !pronounLead.MatchString(low):
		// "output is plain text by default with a --json flag": a
		// default and the way out of it, settled together.
		r.decisionBody(capitalise(s), change)
	case identLike(low[strings.LastIndexByte(low, ' ')+1:]) && match(namedIs) && identLike(sub(namedIs, 2)) && !describes.MatchString(low) && !mishap.MatchString(low):
		r.decisionBody("Use "+sub(namedIs, 2)+" as the "+lower(sub(namedIs, 1)), change)
	case match(subjectIs) && optionOf(sub(subjectIs, 1), sub(subjectIs, 2)) && (!strings.Contains(sub(subjectIs, 2), " on ") || isChoiceWord(firstWord(sub(subjectIs, 2)), false)):
		opt := sub(subjectIs, 2)
		if m := trailingNowOn.FindStringIndex(lower(opt)); m != nil {
			opt = opt[:m[0]]
		}
		part := sentenceCase(sub(subjectIs, 1))
		if head, other, ok := strings.Cut(opt, " with "); ok && otherOption(head, other) {
			// "Firmware is Rust with Embassy": two choices for the part,
			// each of which may be replaced without the other.
			r.decisionBody("Use "+head+" for the "+part, change)
			opt = other
		}
		// "Training code is PyTorch Lightning, not raw loops": the
		// alternative set aside stays with the choice.
		r.decisionBody("Use "+opt+" for the "+part+sub(subjectIs, 3), change)
		if rest := sub(subjectIs, 4); rest != "" {
			// "…, with ISR for the product pages"
			r.statement("Use "+strings.TrimPrefix(strings.TrimPrefix(rest, "with "), "With "), change)
		}
	case match(partsAre) && !describes.MatchString(low) && productPart(lower(sub(partsAre, 1))) && categoryOf[lower(sub(partsAre, 2))] != "" && !pronounLead.MatchString(low):
		r.decisionBody("Use "+sub(partsAre, 2)+" for "+lower(sub(partsAre, 1)), change)
	case match(voteYes) && voteOption(sub(voteYes, 1)):
		r.decision(item{kind: "decision", text: "Use " + sub(voteYes, 1), change: change})
	case match(partUses) && !describes.MatchString(low) && productPart(lower(sub(partUses, 1))) && (isChoiceWord(sub(partUses, 2), false) || qualifiedOption(s[strings.Index(s, sub(partUses, 2)):])) && !pronounLead.MatchString(low) && !mishap.MatchString(low):
		if i := strings.Index(low, ", no "); i > 0 && len(strings.Fields(low[i+5:])) > 4 {
			// "Provisioning uses per-device X.509 certificates, no shared
			// passwords baked into the image": too long to fold into the
			// choice as its alternative; read on its own.
			r.decisionBody(capitalise(s[:i]), change)
			r.statement(capitalise(s[i+2:]), false)
			return true
		}
		r.decisionBody(capitalise(s), change)
	case match(onTheWire) && isChoiceWord(sub(onTheWire, 1), false):
		r.decisionBody("Use "+s, change)
	case match(keepPartOn) && productPart(lower(sub(keepPartOn, 1))) && (categoryOf[lower(sub(keepPartOn, 2))] != "" || sub(keepPartOn, 2) == "Go"):
		// "Keep the public API on JSON over HTTP" ("over" is no
		// alternative here)
		r.decision(item{kind: "decision", text: capitalise(s), change: change})
	case match(keepNamed) && isChoiceWord(sub(keepNamed, 1), false):
		r.decisionBody(capitalise(s), change)
	case match(forAll) && isNamed(sub(forAll, 1)) && !pronounLead.MatchString(low) && len(strings.Fields(sub(forAll, 1))) <= 3:
		r.decisionBody("Use "+s, change)
	case match(partVia) && !describes.MatchString(low) && productPart(lower(sub(partVia, 1))) && viaOption(sub(partVia, 2), strings.Trim(sub(partVia, 3), ",.")) && !pronounLead.MatchString(low):
		r.decisionBody("Use "+strings.Trim(sub(partVia, 3), ",.")+" for "+lower(sub(partVia, 1)), change)
	case match(partWith) && qualifiers[firstWord(lower(sub(partWith, 1)))] && len(strings.Fields(sub(partWith, 1))) == 2 && isNamed(sub(partWith, 1)) && isNamed(sub(partWith, 2)):
		// "plain HTTPS with JSON": the option, qualified, with another.
		r.decisionBody("Use "+s, change)
	case match(partWith) && !describes.MatchString(low) && productPart(lower(sub(partWith, 1))) && !qualifiers[firstWord(lower(sub(partWith, 1)))] && isNamed(sub(partWith, 2)):
		// "Snapshot tests with insta for the CLI output"; "…, not the
		// builder API" stays with the choice (the alternative set aside).
		purpose := sub(partWith, 3)
		if purpose != "" {
			purpose = " " + purpose
		}
		r.decisionBody("Use "+sub(partWith, 2)+" for "+lower(sub(partWith, 1))+purpose+sub(partWith, 5), change)
		if rest := sub(partWith, 4); rest != "" {
			r.statement(rest, change) // "…, no Redis yet"
		}
		if other := sub(partWith, 6); other != "" && isNamed(firstWord(other)) {
			// "Errors with anyhow in the binary, thiserror in the
			// library": the other option, for its own place.
			r.decisionBody("Use "+other, change)
		}
	case match(namedEach) && categoryOf[lower(sub(namedEach, 1))] != "":
		r.decisionBody("Use "+s, change)
	case match(goesThrough) && !describes.MatchString(low) && productPart(lower(sub(goesThrough, 1))) && isNamed(sub(goesThrough, 2)):
		r.partDecision(s, change)
	case match(makeSpec) && hasChoice(sub(makeSpec, 1)) && !makeTask.MatchString(low):
		r.decisionBody(s, change)
	case match(willBe) && willBeOption(sub(willBe, 2)):
		r.decisionBody(s, change)
	case match(insteadBare) && hasChoice(sub(insteadBare, 1)) && len(strings.Fields(sub(insteadBare, 1))) <= 4:
		r.decisionBody("Use "+s, change)
	case match(publishTo) && productPart(lower(sub(publishTo, 1))) && categoryOf[lower(sub(publishTo, 2))] != "" && !oneOff.MatchString(low):
		r.decisionBody(capitalise(s), change)
	case match(placedOn) && !describes.MatchString(low) && !mishap.MatchString(low) && !oneOff.MatchString(low) && !pronounLead.MatchString(low) && placedOption(sub(placedOn, 3), sub(placedOn, 4)):
		r.decisionBody(capitalise(s), change)
	case decided && hasChoice(s) && !pronounLead.MatchString(low) && !judgement.MatchString(low):
		r.decisionBody(s, change)
	default:
		return false
	}
	return true
}

// replaced records the change from the option old to the choice to, whose
// last clause may give the reason ("swap Auth0 for Clerk, we need
// organizations", "drop Datadog and go with Grafana Cloud, the bill is out
// of control").
func (r *reader) replaced(old, to string) {
	to, judged := cutJudgement(to)
	if judged == "" {
		to, judged = cutOldRemark(to, old) // "…, Jenkins upkeep eats our week"
	}
	to, why := splitReason(to)
	r.decision(item{kind: "decision", text: "Use " + to + " (instead of " + old + ")", old: old, why: firstNonEmpty(why, judged), change: true})
}

// partDecision records "X goes in Redis", and "…, Y in Postgres" after it
// as a second decision sharing the verb.
func (r *reader) partDecision(s string, change bool) {
	if i := strings.Index(s, ", "); i > 0 {
		rest := s[i+2:]
		if m := elidedPart.FindStringSubmatchIndex(lower(rest)); m != nil && len(strings.Fields(rest[m[2]:m[3]])) <= 3 && isNamed(rest[m[4]:m[5]]) {
			r.decisionBody(s[:i], change)
			r.decisionBody(capitalise(rest), change)
			return
		}
	}
	r.decisionBody(s, change)
}

// namesChoice reports whether obj, the object of a verb that is not a
// decision by itself ("do", "put", "build", "call", -ing forms), names the
// option chosen: first ("do JWTs"), after a preposition ("the worker in
// Python", "the flags in a YAML file", "hosting it on Render") or done
// in-house ("call the Stripe API ourselves"); not "build the Docker image",
// "put it in the README".
// inChoice reports whether obj is "it in <option>" ("we'll do it in Go
// with chi", "we're making this in Godot 4").
func inChoice(obj string) bool {
	loc := doItIn.FindStringIndex(obj)
	return loc != nil && isChoiceWord(firstWord(obj[loc[1]:]), false)
}

func namesChoice(verb, obj string) bool {
	f := strings.Fields(obj)
	if b, ok := verbBase[verb]; ok {
		verb = b
	}
	if len(f) == 0 || !plainVerbs[verb] && pronounLead.MatchString(lower(obj)) {
		return false
	}
	if strings.EqualFold(f[0], "to") && len(f) > 1 && isChoiceWord(f[1], false) {
		return true // "deploying to Fly.io"
	}
	if isChoiceWord(f[0], false) || inHouse.MatchString(lower(obj)) && (hasChoice(obj) || builds[verb]) {
		return true
	}
	for i := 0; i < len(f)-1; i++ {
		switch lower(f[i]) {
		case "in", "with", "on", "using", "via", "as", "through", "to":
			next := f[i+1]
			if a := lower(next); (a == "a" || a == "an" || a == "the") && i+2 < len(f) {
				next = f[i+2]
			}
			if isChoiceWord(next, false) {
				return true
			}
		}
	}
	return false
}

// builds are the verbs whose object made in-house is a decision by itself
// ("we'll write our own router").
var builds = map[string]bool{"write": true, "build": true, "implement": true, "handle": true}

var inHouse = mustPattern(`\b(?:ourselves|myself|in-house|by hand|from scratch|our own)\b`)

// matcher returns match, which reports whether re matches low, and sub,
// which returns group g of that match read from s (trimmed; "" when the
// group took no part). The forms are tried in turn and the one that
// matches is read right after: the last match is kept so it runs once.
func matcher(s, low string) (match func(re *pattern) bool, sub func(re *pattern, g int) string) {
	var last *pattern
	var m []int
	match = func(re *pattern) bool {
		if re != last {
			last, m = re, re.FindStringSubmatchIndex(low)
		}
		return m != nil
	}
	sub = func(re *pattern, g int) string {
		if !match(re) || m[2*g] < 0 {
			return ""
		}
		return strings.TrimSpace(s[m[2*g]:m[2*g+1]])
	}
	return match, sub
}

// decisionBody records a decision statement, with the reason and folded
// alternatives it carries ("X, not Y", "X instead of Y", "X; Y is out").
func (r *reader) decisionBody(body string, change bool) {
	if m := insteadLead.FindStringSubmatch(strings.TrimSpace(body)); m != nil {
		// "Instead of Flask, serve the model with BentoML": said as
		// "… with BentoML instead of Flask".
		body, change = capitalise(strings.TrimRight(m[2], ". "))+" instead of "+m[1], true
	}
	body, judged := cutJudgement(strings.TrimSpace(body))
	low := lower(body)
	if m := trailingNowOn.FindStringIndex(low); m != nil {
		body = body[:m[0]]
		low = lower(body)
	}
	if i := strings.Index(low, " instead"); i > 0 && strings.HasSuffix(low, " instead") {
		body, change = body[:i], true
		low = lower(body)
	}
	if strings.HasPrefix(low, "we ") {
		body = capitalise(body[3:])
	}
	if m := goToward.FindStringSubmatch(body); m != nil && hasChoice(m[1]) {
		body = "Use " + m[1] // "go to Zephyr instead"
	}
	body, why := splitReason(body)
	if why != "" && dontUse.MatchString(lower(why)) {
		// "Manifest V3 only, we don't ship an MV2 build either": an
		// option turned down beside the choice, not its reason.
		defer r.statement(capitalise(why), false)
		why = ""
	}
	why = firstNonEmpty(why, judged)
	if opt, because := judgedOption(judged, body); opt != "" {
		// "Go with DuckDB, Spark is overkill here": the option judged is
		// turned down.
		defer r.add(item{kind: "reject", text: opt, why: because})
	}
	if m := foldedOut.FindStringSubmatch(body); m != nil {
		r.decision(item{kind: "decision", text: m[1], why: why, change: change})
		r.add(item{kind: "reject", text: m[2]})
		return
	}
	_, old := foldOld(body)
	if lb := lower(body); old != "" && (strings.Contains(lb, ", no ") || strings.Contains(lb, ", but no ")) {
		if i := strings.LastIndex(lb, ", "); i > 0 && practiceWord.MatchString(lower(old)) {
			// "Changesets for versioning, no manual version bumps": a
			// practice ruled out beside the choice, a rule.
			r.decision(item{kind: "decision", text: body[:i], why: why, change: change})
			r.add(item{kind: "constraint", text: strings.TrimSpace(body[i+2:])})
			return
		}
		r.decision(item{kind: "decision", text: body, why: why, change: change})
		r.add(item{kind: "reject", text: old})
		return
	}
	r.decision(item{kind: "decision", text: body, old: old, why: why, change: change})
}

func (r *reader) decision(it item) {
	if !hasContent(it.text) {
		return
	}
	if t, ok := strings.CutSuffix(it.text, " please"); ok && hasContent(t) {
		it.text = t // "no prisma — drizzle please"
	}
	if m := parenWhy.FindStringSubmatchIndex(it.text); m != nil && it.why == "" {
		// "feature flags via Unleash, not LaunchDarkly (price)"
		it.why, it.text = it.text[m[2]:m[3]], strings.TrimSpace(it.text[:m[0]])
	}
	r.add(it)
	if m := parenNo.FindStringSubmatchIndex(it.text); m != nil && it.old == "" && bareOption(it.text[m[2]:m[3]]) {
		// "Postgres for everything, including the job queue (no Redis)"
		r.add(item{kind: "reject", text: it.text[m[2]:m[3]]})
	}
}

// parenWhy: a decision's last word in parentheses, a reason given as a
// note does ("(price)", "(licensing)"), not an option ("(no Redis)").
var parenWhy = mustPattern(`\s\((price|cost|costs|licensing|license|latency|speed|performance|security|compliance|gdpr|privacy|simplicity|maintenance|support|budget|vendor lock-in|lock-in)\)$`)

var parenNo = mustPattern(`\((?:no|not|without)\s+([^()]{1,40})\)`)

// foldOld returns the statement without its folded alternative and the
// alternative ("PostgreSQL, not MongoDB" → MongoDB).
func foldOld(s string) (string, string) {
	f := foldings.get(s)
	if f.old == "" {
		return s, ""
	}
	return s[f.from:f.to], f.old
}

// folding is what foldOld finds: where the choice is, and the alternative.
type folding struct {
	from, to int
	old      string
}

var foldings = newMemo(readFolding)

func readFolding(s string) folding {
	m := folded.FindStringSubmatchIndex(s)
	if m == nil {
		return folding{}
	}
	if carriedOver.MatchString(lower(s[m[2]:m[3]])) && strings.HasPrefix(lower(s[m[3]:]), " over ") || carrier.MatchString(lower(s[m[3]:])) {
		// "Devices report over MQTT", "Use gRPC over HTTP/2": the way,
		// not an option preferred over another.
		return folding{}
	}
	old := strings.TrimSpace(s[m[4]:m[5]])
	if loc := cutOld.FindStringIndex(old); loc != nil && loc[0] > 0 {
		old = old[:loc[0]]
	}
	old = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(old), "using "))
	if old == "" || len(strings.Fields(old)) > 5 {
		return folding{}
	}
	return folding{from: m[2], to: m[3], old: strings.Clone(old)}
}

// rejectForms reads the unlabelled ways of rejecting an option.
func (r *reader) rejectForms(s, low string) bool {
	match, sub := matcher(s, low)
	grab := func(re *pattern) string { return sub(re, 1) }
	switch {
	case match(dontUse):
		body := grab(dontUse)
		if strings.Contains(low, "no longer") || strings.HasSuffix(low, " anymore") || strings.HasSuffix(low, " any more") || strings.Contains(low, " after all") {
			r.changed = true // "let's not use goose after all, atlas is nicer"
		}
		if strings.HasPrefix(low, "never ") && !strings.Contains(lower(body), " ") {
			return false // "never use X" as a lasting rule is read below
		}
		if strings.HasPrefix(low, "never ") {
			return false
		}
		n := len(r.items)
		r.rejectList(body)
		r.enoughInstead(n) // "We're not doing Stripe anymore, Paddle handles the VAT for us"
	case match(notGoingTo):
		// "We're not going to use Terraform": turned down, said as what
		// will not happen.
		n := len(r.items)
		r.rejectList(grab(notGoingTo))
		r.enoughInstead(n)
	case match(droppedPast) && isNamed(sub(droppedPast, 1)) && !strings.HasPrefix(lower(sub(droppedPast, 1)), "the "):
		r.add(item{kind: "reject", text: sub(droppedPast, 1)})
		r.changed = true
	case match(voteNo) && voteOption(sub(voteNo, 1)):
		r.add(item{kind: "reject", text: sub(voteNo, 1)})
	case match(notBuild) && !pronounLead.MatchString(lower(sub(notBuild, 1))) && !notBuildHere.MatchString(low) && !oneOff.MatchString(low) && len(strings.Fields(sub(notBuild, 1))) <= 4:
		r.rejectList(sub(notBuild, 1))
	case match(dontPullIn) && (isNamed(sub(dontPullIn, 1)) || hasChoice(sub(dontPullIn, 1)) || packageName(sub(dontPullIn, 1)) && !addVerb.MatchString(low)):
		r.add(item{kind: "reject", text: sub(dontPullIn, 1), why: strings.TrimRight(sub(dontPullIn, 2), ". ")})
	case match(makeIt) && isNamed(sub(makeIt, 1)):
		r.decisionBody(capitalise(strings.TrimSpace(strings.TrimSuffix(s, ", "+sub(makeIt, 2)))), r.changed)
		if rest := sub(makeIt, 2); rest != "" {
			r.statement(rest, r.changed)
		}
	case match(youKeep) && !pronounLead.MatchString(lower(sub(youKeep, 1))):
		// The agent told to stop bringing something in: an option turned
		// down, or a practice ruled out ("stop putting business logic in
		// controllers").
		if obj := strings.TrimRight(sub(youKeep, 1), ". "); len(strings.Fields(obj)) <= 3 && !placeWord.MatchString(" "+lower(obj)+" ") {
			r.add(item{kind: "reject", text: obj})
		} else {
			r.add(item{kind: "constraint", text: capitalise(strings.TrimRight(s[:len(s)-len(sub(youKeep, 2))], ", ."))})
		}
		if rest := sub(youKeep, 2); rest != "" {
			if at, end, ok := usedNow(rest, sub(youKeep, 1)); ok {
				// "you keep reaching for actix — it's axum, it has been
				// since the start": what holds, said again.
				r.decision(item{kind: "decision", text: "Use " + rest[at:end], stays: true})
				break
			}
			r.statement(rest, true)
		}
	case match(lookedAtBut) && (isNamed(sub(lookedAtBut, 1)) || bareOption(sub(lookedAtBut, 1))) && (reasonish.MatchString(lower(sub(lookedAtBut, 2))) || judgement.MatchString(lower(sub(lookedAtBut, 2)))):
		// "We looked at Janus but its plugin model is more than we need".
		r.add(item{kind: "reject", text: sub(lookedAtBut, 1), why: strings.TrimRight(sub(lookedAtBut, 2), ". ")})
	case match(keepOut) && (isNamed(sub(keepOut, 1)) || bareOption(sub(keepOut, 1))):
		// "keep DASH out of it for now"
		r.add(item{kind: "reject", text: sub(keepOut, 1)})
	case match(dontSuggest) && (isNamed(sub(dontSuggest, 1)+sub(dontSuggest, 3)+sub(dontSuggest, 5)) || bareOption(sub(dontSuggest, 1)+sub(dontSuggest, 3)+sub(dontSuggest, 5))):
		// "Don't suggest Kubernetes again, we're a team of two", "We
		// already said no to MongoDB": an option the user ruled out.
		// (One alternative matched: the others' groups are empty.)
		r.add(item{kind: "reject", text: sub(dontSuggest, 1) + sub(dontSuggest, 3) + sub(dontSuggest, 5), why: strings.TrimRight(sub(dontSuggest, 2)+sub(dontSuggest, 4)+sub(dontSuggest, 6), ". ")})
	case match(ruledOut) && (isNamed(sub(ruledOut, 1)) || bareOption(sub(ruledOut, 1))):
		r.add(item{kind: "reject", text: sub(ruledOut, 1)})
	case match(nobodyWants) && (bareOption(sub(nobodyWants, 1)) || isNamed(sub(nobodyWants, 1))):
		// "nobody wants another PagerDuty integration"
		r.add(item{kind: "reject", text: sub(nobodyWants, 1)})
	case match(noThenUse) && isNamed(sub(noThenUse, 1)):
		r.add(item{kind: "reject", text: sub(noThenUse, 1)})
		r.decisionBody("Use "+sub(noThenUse, 2), r.changed)
	case match(noReason) && !strings.ContainsAny(sub(noReason, 1), "0123456789") && !placeWord.MatchString(lower(sub(noReason, 1))):
		r.add(item{kind: "reject", text: sub(noReason, 1), why: strings.TrimRight(sub(noReason, 2), ". ")})
	case match(skipFor) && !pronounLead.MatchString(lower(sub(skipFor, 1))):
		r.add(item{kind: "reject", text: sub(skipFor, 1), why: strings.TrimSpace(trimAnySuffix(strings.TrimRight(sub(skipFor, 2), ". "), " for now", " for the time being"))})
	case match(talkedAbout) && isNamed(sub(talkedAbout, 1)) &&
		(fineTail.MatchString(lower(strings.TrimRight(sub(talkedAbout, 2), ". "))) || judgement.MatchString(lower(sub(talkedAbout, 2))) || comparativeChoice.MatchString(lower(sub(talkedAbout, 2)))):
		r.add(item{kind: "reject", text: sub(talkedAbout, 1), why: strings.TrimRight(sub(talkedAbout, 2), ". ")})
	case match(weSkip) && !pronounLead.MatchString(lower(sub(weSkip, 1))) && len(strings.Fields(sub(weSkip, 1))) <= 4:
		r.rejectList(sub(weSkip, 1))
	case match(skipNamed) && isNamed(sub(skipNamed, 1)) && !pronounLead.MatchString(lower(sub(skipNamed, 1))):
		opt, rest := sub(skipNamed, 1), sub(skipNamed, 2)
		if m := coversNeed.FindStringSubmatch(rest); m != nil && isNamed(m[1]) {
			r.add(item{kind: "reject", text: opt})
			r.decision(item{kind: "decision", text: "Use " + m[1] + " (instead of " + opt + ")"})
			break
		}
		r.add(item{kind: "reject", text: opt, why: strings.TrimRight(rest, ". ")})
	case match(ratherNot) && len(strings.Fields(sub(ratherNot, 1))) <= 4 && (hasChoice(sub(ratherNot, 1)) || isNamed(sub(ratherNot, 1))):
		r.rejectList(sub(ratherNot, 1))
	case match(dislike) && isNamed(firstNonEmpty(sub(dislike, 1), sub(dislike, 2))):
		opt, why := firstNonEmpty(sub(dislike, 1), sub(dislike, 2)), ""
		if o, what, ok := strings.Cut(opt, "'s "); ok {
			opt, why = o, what // "I don't like Sentry's pricing"
		}
		r.add(item{kind: "reject", text: opt, why: why})
	case match(triedDrop) && !conditional.MatchString(lower(sub(triedDrop, 2))):
		opt := sub(triedDrop, 1)
		if loc := triedCut.FindStringIndex(lower(opt)); loc != nil && loc[0] > 0 {
			opt = opt[:loc[0]]
		}
		r.add(item{kind: "reject", text: opt, why: strings.TrimRight(sub(triedDrop, 2), ". ")})
		r.changed = true
	case match(notNeeded) && len(strings.Fields(sub(notNeeded, 1))) <= 4 && !pronounLead.MatchString(lower(sub(notNeeded, 1))) && (isNamed(sub(notNeeded, 1)) || hasChoice(sub(notNeeded, 1))):
		// "We're not going to need Helm at all", "let's not pay for Sentry"
		r.changed = true
		r.add(item{kind: "reject", text: sub(notNeeded, 1)})
	case match(removeNamed) && isChoiceWord(sub(removeNamed, 1), false) && !strings.HasPrefix(lower(sub(removeNamed, 1)), "the"):
		r.changed = true
		r.rejectList(sub(removeNamed, 1) + " " + sub(removeNamed, 2))
	case match(keepButDrop) && isNamed(sub(keepButDrop, 1)):
		r.add(item{kind: "reject", text: sub(keepButDrop, 1), why: strings.TrimRight(sub(keepButDrop, 2), ". ")})
	case match(dropForm):
		if pronounLead.MatchString(lower(grab(dropForm))) || strings.HasPrefix(lower(grab(dropForm)), "about it") {
			return true // "forget it, I'll fix the Dockerfile myself"
		}
		if scratchNoun.MatchString(low) {
			return false // "scratch files go to /scratch": the noun, not the verb
		}
		body := strings.TrimPrefix(grab(dropForm), "about ")
		if i := strings.Index(body, ", "); i > 0 && keepAfterDrop.MatchString(lower(body[i+2:])) {
			// "never mind about fastify, stay on express": what stays is
			// said on its own.
			defer r.statement(body[i+2:], true)
			body = body[:i]
		}
		if dataRule.MatchString(lower(body)) {
			// "Drop customers with fewer than 3 months of history": which
			// data is used, not an option turned down.
			r.add(item{kind: "constraint", text: capitalise(strings.TrimRight(s, ". "))})
			return true
		}
		why := ""
		if loc := guessedReason.FindStringIndex(lower(body)); loc != nil {
			// "drop the tenure_days feature, I think it leaks the label"
			body, why = body[:loc[0]], strings.TrimSpace(body[loc[0]+1:])
		}
		r.changed = true
		n := len(r.items)
		r.rejectList(body)
		if why != "" {
			r.attach(seq(n, len(r.items)), why)
		}
		r.enoughInstead(n)
	case match(dontWant):
		body := grab(dontWant)
		if m := wantToKeepOut.FindStringSubmatch(lower(body)); m != nil && (isNamed(body[len(body)-len(m[1]):]) || hasChoice(m[1])) {
			r.rejectList(body[len(body)-len(m[1]):]) // "I don't want to support Safari for now"
			return true
		}
		if lb := lower(body); strings.HasPrefix(lb, "to ") || pronounLead.MatchString(lb) {
			return false // "I don't want to rush this"
		} else if strings.HasPrefix(lb, "any ") || conditionMid.MatchString(lb) {
			r.add(item{kind: "constraint", text: s}) // "I don't want any print statements left"
			return true
		}
		r.rejectList(body)
	case match(isOut):
		body := grab(isOut)
		if i := strings.LastIndex(body, ", "); i > 0 && !strings.Contains(low, lower(body)+" are ") {
			// "Sidekiq stays, GoodJob is off the table": one option is out;
			// what comes before it is said on its own.
			head := body[:i]
			body = body[i+2:]
			r.statement(head, r.changed)
		}
		r.rejectList(body)
		r.changed = true
	case match(turnedDown) && len(strings.Fields(grab(turnedDown))) <= 5 && !machineNo.MatchString(lower(sub(turnedDown, 2))):
		// "Excel export was turned down by product"
		why := sub(turnedDown, 2)
		if why != "" {
			why = "turned down by " + strings.TrimRight(why, ". ")
		}
		r.add(item{kind: "reject", text: grab(turnedDown), why: why})
		r.changed = true
	case match(canGo):
		// "step 4 (the GraphQL layer) can go": the thing the step is.
		body, why := grab(canGo), sub(canGo, 2)
		if sm := stepNamed.FindStringSubmatch(body); sm != nil {
			body = sm[1]
		}
		if why != "" && !reasonish.MatchString(lower(why)) {
			return false
		}
		r.add(item{kind: "reject", text: body, why: why})
		r.changed = true
	case match(wontCut):
		r.rejectList(grab(wontCut))
		r.changed = true
	case match(outOfScope) && len(strings.Fields(sub(outOfScope, 1))) <= 4 && !pronounLead.MatchString(lower(sub(outOfScope, 1))):
		why := sub(outOfScope, 2)
		if why != "" {
			why = "out of scope for " + strings.TrimRight(why, ". ")
		}
		r.add(item{kind: "reject", text: sub(outOfScope, 1), why: why})
	case match(noUntil) && strings.Contains(low, " unless "):
		// "no raw sql unless it's a report": a rule with its exception.
		r.add(item{kind: "constraint", text: capitalise(strings.TrimRight(s, ". "))})
	case match(noUntil) && len(strings.Fields(sub(noUntil, 1))) <= 4 && !noChitChat.MatchString(lower(sub(noUntil, 1))):
		// "(We agreed) no microservices until we have more than three
		// engineers": turned down, for as long as the condition holds.
		r.add(item{kind: "reject", text: sub(noUntil, 1), why: strings.TrimRight(sub(noUntil, 2), ". ")})
	case match(noForm) && strings.Contains(low, " unless "):
		r.add(item{kind: "constraint", text: capitalise(strings.TrimRight(s, ". "))}) // "no raw sql unless it's a report"
	case match(noForm) && strings.HasPrefix(low, "no more than ") && maxRule.MatchString(low):
		return false // "No more than 100 lines per function": a bound, read as a rule
	case match(noForm):
		body := grab(noForm)
		if b := strings.TrimRight(body, ". "); trimAnySuffix(b, " after all", " anymore", " any more") != b {
			// "No GraphQL after all": a mind changed about an option.
			body, r.changed = trimAnySuffix(b, " after all", " anymore", " any more"), true
		}
		if noChitChat.MatchString(lower(body)) || noMishap.MatchString(lower(body)) {
			return true // "no worries", "no issues at launch, please": a wish
		}
		if practiceWord.MatchString(lower(body)) && !strings.Contains(body, ",") {
			r.add(item{kind: "constraint", text: strings.TrimRight(s, ". ")}) // "no manual version bumps": a way of working ruled out
			return true
		}
		if m := noButOnly.FindStringSubmatchIndex(lower(body)); m != nil {
			// "No server-side sessions, JWTs only": one turned down, the
			// other chosen.
			g := 4
			if m[g] < 0 {
				g = 6
			}
			if chosen := body[m[g]:m[g+1]]; isChoiceWord(firstWord(chosen), false) || hasChoice(chosen) {
				r.add(item{kind: "reject", text: body[m[2]:m[3]]})
				r.decision(item{kind: "decision", text: "Use " + chosen, change: true})
				return true
			} else if m[6] >= 0 && len(strings.Fields(chosen)) <= 2 {
				// "No notebooks in the repo, scripts only"
				r.add(item{kind: "reject", text: body[m[2]:m[3]]})
				return true
			}
		}
		if loc := scopeTail.FindStringIndex(lower(body)); loc != nil && len(strings.Fields(body[:loc[0]])) <= 3 && !noMishap.MatchString(lower(body)) {
			// "No microtransactions at launch": left out of a release.
			r.add(item{kind: "reject", text: body[:loc[0]]})
			return true
		}
		if head, tail, ok := strings.Cut(body, ", "); ok && len(strings.Fields(head)) <= 3 && (hasChoice(head) || isNamed(head)) && strings.HasPrefix(lower(tail), "we ") && reads(tail) {
			// "No Sentry, we self-host GlitchTip": turned down, and what
			// is done instead.
			r.add(item{kind: "reject", text: head})
			r.changed = true
			r.statement(tail, true)
			return true
		}
		parts := noListSep.Split(body, -1)
		if len(parts) == 1 && len(strings.Fields(strings.TrimSuffix(firstReason(body), " for now"))) >= 3 {
			r.add(item{kind: "constraint", text: s}) // "No secrets in logs"
			return true
		}
		named := true
		for i, p := range parts {
			it, why := splitReason(p)
			it = trailingAnywhere.ReplaceAllString(strings.TrimSpace(it), "")
			named = named && isNamed(it)
			if i == len(parts)-1 {
				r.add(item{kind: "reject", text: it, why: why})
			} else {
				r.add(item{kind: "reject", text: it})
			}
		}
		// "No Redis. Use Memcached.": a named option dropped, so a bare
		// choice after it is its replacement.
		r.changed = r.changed || named
	case match(notForm):
		body := grab(notForm)
		if !isChoiceWord(firstWord(body), false) {
			return false
		}
		r.rejectList(body)
	default:
		return false
	}
	return true
}

// rejectList records "A, B (reason)" / "no A, keep B" / "A — reason".
// boundWord: a part of a list that states a bound ("iOS 17 minimum").
var boundWord = mustPattern(`\b(?:minimum|maximum|at least|at most|or (?:later|newer|higher|above))\b`)

func (r *reader) rejectList(body string) {
	if loc := dashSep.FindStringIndex(body); loc != nil && r.changed && isChoiceWord(firstWord(body[loc[1]:]), false) {
		// "Ditch Webpack — Vite is way faster": what is said better after
		// the dash is the replacement, read as after a comma.
		if after := lower(body[loc[1]:]); comparativeChoice.MatchString(after) || hasBetter.MatchString(after) {
			body = body[:loc[0]] + ", " + body[loc[1]:]
		}
	}
	body, why := splitReason(body)
	body = rejectAdverb.ReplaceAllString(body, "") // "drop zap everywhere"

	if m := reasonParen.FindStringSubmatch(body); m != nil && why == "" {
		body, why = m[1], m[2]
	}
	parts := optionSep.Split(body, -1)
	var names []string
	for i, p := range parts {
		p = strings.TrimSpace(p)
		lp := lower(p)
		switch {
		case p == "":
		case i > 0 && !r.changed && handledBy.MatchString(lp) && !switchTo.MatchString(lp):
			// "Click directly is a no-go, Typer gives us the help for
			// free": what the option standing does that this one would.
			why = firstNonEmpty(why, strings.Join(parts[i:], ", "))
			goto done
		case i > 0 && (goWith.MatchString(lp) || willVerb.MatchString(lp) || switchTo.MatchString(lp) || verbWith.MatchString(lp) && reads(p)):
			r.statement(p, true)
		case i > 0 && boundWord.MatchString(lp):
			// "drop iOS 16, iOS 17 minimum": the new bound, a rule.
			r.add(item{kind: "constraint", text: strings.TrimRight(p, ". ")})
		case i > 0 && r.changed && weWillNamed.MatchString(lp) && hasChoice(p):
			// "Let's get rid of Mox, we'll hit a real Postgres in tests":
			// what is done instead.
			r.decision(item{kind: "decision", text: capitalise(p[len(weWillNamed.FindString(lp)):]), change: true, old: lastName(names)})
			goto done
		case i > 0 && r.changed && hasBetter.MatchString(lp) && !pronounLead.MatchString(lp) && isChoiceWord(firstWord(p), false):
			// "Scrap Turborepo, Nx has better caching": the option said to
			// do better replaces it (it was listed as rejected too).
			m := hasBetter.FindStringSubmatchIndex(lp)
			r.decision(item{kind: "decision", text: "Use " + p[m[2]:m[3]], why: strings.TrimRight(p[m[4]:m[5]], ". "), change: true, old: lastName(names)})
			goto done
		case i > 0 && r.changed && comparativeChoice.MatchString(lp) && !pronounLead.MatchString(lp):
			// "Forget JWT, plain cookie sessions are simpler": the
			// option said to be better is what replaces it.
			m := comparativeChoice.FindStringSubmatchIndex(lp)
			r.decision(item{kind: "decision", text: "Use " + p[m[2]:m[3]], why: strings.TrimRight(p[m[4]:m[5]], ". "), change: true, old: lastName(names)})
			goto done
		case i > 0 && r.changed && r.doesInstead(p, lastName(names)):
			// "Scratch cargo-release, cargo-dist builds the installers
			// for us": the option that does the work instead.
			goto done
		case i > 0 && reasonLead.MatchString(lp):
			why = strings.Join(parts[i:], ", ")
			goto done
		case i > 0 && strings.HasSuffix(lp, " only") && len(strings.Fields(p)) <= 6 && !pronounLead.MatchString(lp):
			// "don't bother with a web UI, CLI + API only": what stands,
			// not a second option turned down.
			r.decision(item{kind: "decision", text: capitalise(p), old: lastName(names)})
			goto done
		case keepForm.MatchString(lp):
			r.decision(item{kind: "decision", text: capitalise(p)})
		case i > 0 && (judgement.MatchString(lp) || handledBy.MatchString(lp) || clauseOf.MatchString(lp) || fineTail.MatchString(lp)):
			// "a single node is enough", "fetch is fine": why the option
			// is turned down
			why = firstNonEmpty(why, strings.Join(parts[i:], ", "))
			goto done
		case i > 0 && commentary.MatchString(lp):
			// "it works for now": a remark, not an option
		case i > 0 && stateClause.MatchString(lp):
			// "payments stay on the web": what stands instead, its reason
			why = firstNonEmpty(why, strings.Join(parts[i:], ", "))
			goto done
		default:
			p = strings.TrimSpace(trimAny(p, "no ", "not ", "using ", "use "))
			p = strings.TrimSpace(trimAnySuffix(p, " after all", " anymore", " entirely", " completely", " altogether", " directly", " here"))
			if loc := forNowTail.FindStringIndex(lower(p)); loc != nil && loc[0] > 0 {
				p = p[:loc[0]] // "in-app purchases for now", "tablets in v1"
			}
			p = p[len(ideaOf.FindString(lower(p))):]
			if m := ideaTail.FindStringSubmatchIndex(lower(p)); m != nil && (hasChoice(p[:m[2]]) || isNamed(p[:m[2]])) {
				p = p[:m[2]] // "the Redis idea", "the Kafka plan": the option
			}
			names = append(names, p)
		}
	}
done:
	for _, n := range names {
		r.add(item{kind: "reject", text: n, why: why})
	}
}

// reads reports whether s, read as a change of decision, states something.
func reads(s string) bool {
	probe := reader{changed: true}
	probe.statement(s, true)
	return len(probe.items) > 0
}

var (
	trailingAnywhere = mustPattern(`(?:\s+(?:please|for now|anywhere|at all|ever|whatsoever|in here|in this (?:repo|project|codebase)))+$`)
	noButOnly        = mustPattern(`^(.{1,40}?)[,;]\s+(?:(?:just|only|use)\s+(.{1,30}?)|(.{1,30}?)\s+(?:only|instead))$`)
	noListSep        = mustPattern(`(?i),\s*(?:and\s+)?no\s+`) // "no A, and no B"
	optionSep        = mustPattern(`\s*[,;]\s*|\s+or\s+`)      // "A, B or C"
	ruleSep          = mustPattern(`,\s*(?:and\s+)?`)          // "a, b, and c"
	reasonLead       = mustPattern(`^(?:too|it'?s|its|it is|not|way|overkill|because|since|as|they|we|(?:the\s+)?only|nothing|nobody|no one)\b`)
	commentary       = mustPattern(`\s(?:is|are|was|were|works|does|do)\b`)
	keepForm         = mustPattern(`^(?:keep|use|stay with|stick with|go with|we keep|we use)\s+\S`)
)

// groupNot reports whether p matches s and what its first group matched
// does not match not: one search, not a match and then a search for the
// group.
func groupNot(p, not *pattern, s string) bool {
	m := p.FindStringSubmatch(s)
	return m != nil && !not.MatchString(m[1])
}

// constraintForms reads lasting rules stated on their own.
func (r *reader) constraintForms(s, low string) bool {
	switch {
	case notRules.MatchString(low):
		return false
	case alwaysNever.MatchString(low) && !strings.Contains(low, "this time"), avoidForm.MatchString(low):
	case leaveAlone.MatchString(low):
		// "Leave the migrations folder alone": not to be touched.
		r.add(item{kind: "constraint", text: capitalise(strings.TrimRight(s, ".! "))})
		return true
	case dontRule.MatchString(low):
		m := dontRule.FindStringSubmatch(low)
		if dontSkip.MatchString(m[1]) || oneOff.MatchString(low) {
			return false
		}
	case mustForm.MatchString(low) && !oneOff.MatchString(low):
	case keepAs.MatchString(low) && !oneOff.MatchString(low), namingCase.MatchString(low) && !oneOff.MatchString(low):
	case groupNot(keepRule, keepNot, low) && !oneOff.MatchString(low),
		skipAny.MatchString(low) && !oneOff.MatchString(low),
		allAre.MatchString(low) && (!allNot.MatchString(low) || modal.MatchString(low)) && !describes.MatchString(low),
		cappedAt.MatchString(low) && !oneOff.MatchString(low) && !describes.MatchString(low), staysAt.MatchString(low) && !oneOff.MatchString(low) && !describes.MatchString(low),
		isMust.MatchString(low) && !pronounLead.MatchString(low),
		!pronounLead.MatchString(low) && !mishap.MatchString(low) && conventional(s, low),
		alwaysNamed(s, low) && !describes.MatchString(low) && !mishap.MatchString(low),
		alwaysDone.MatchString(low) && !pronounLead.MatchString(low) && !oneOff.MatchString(low) && !describes.MatchString(low) && !mishap.MatchString(strings.Split(low, ", never")[0]),
		liveIn.MatchString(low) && !liveNot.MatchString(low) && !oneOff.MatchString(low) && !describes.MatchString(low),
		groupNot(stickTo, stickNot, low),
		stayRule.MatchString(low) && !stayTask.MatchString(low) && !oneOff.MatchString(low),
		shouldRule.MatchString(low) && !oneOff.MatchString(low) && !pronounLead.MatchString(low) && !allNot.MatchString(low) && !comparative.MatchString(low),
		maxRule.MatchString(low), ensureAll.MatchString(low), standingImper.MatchString(low), propertyRule.MatchString(low) && !describes.MatchString(low) && !mishap.MatchString(low),
		supportRule.MatchString(low), minVersion.MatchString(low) && !strings.Contains(low, "viable"), practiceRule.MatchString(low) && !allNot.MatchString(low),
		onlyRule.MatchString(low) && isChoiceWord(firstWord(s), false),
		perRule.MatchString(low), nobodyOnly.MatchString(low), latencyRule.MatchString(low), targetsOnly.MatchString(low),
		cadenceRule.MatchString(low) && !describes.MatchString(low) && !mishap.MatchString(low),
		retainRule.MatchString(low) && !describes.MatchString(low) && !oneOff.MatchString(low),
		ttlRule.MatchString(strings.TrimRight(low, ".! ")), nothingExcept.MatchString(low), nothingElse.MatchString(low), durationRule.MatchString(low), onlyEverStores.MatchString(low) && !describes.MatchString(low), runsWhen.MatchString(low) && !describes.MatchString(low), onlyHappen.MatchString(low), roundRule.MatchString(low), nothingDeleted.MatchString(low), everyIs.MatchString(low), everyTime.MatchString(low) && !describes.MatchString(low), timeBudget.MatchString(low), fineButSkip.MatchString(low), pathPlace.MatchString(low) && !pronounLead.MatchString(low) && !describes.MatchString(low), fallbackRule.MatchString(low),
		onlyWhere.MatchString(low) && isChoiceWord(firstWord(s), false), envOnly.MatchString(low) && !stopWords[firstWord(low)], respectsSetting.MatchString(s),
		imperativeRule.MatchString(low), sizeRule.MatchString(low) && !mishap.MatchString(low) && !isNamed(firstWord(s)), alertRule.MatchString(low),
		holdsNo.MatchString(low) && !pronounLead.MatchString(low) && !mishap.MatchString(low),
		thresholdRule.MatchString(low) && !describes.MatchString(low) && !mishap.MatchString(low) && !oneOff.MatchString(low),
		(reportEvery.MatchString(low) || refuseRule.MatchString(low)) && !describes.MatchString(low) && !mishap.MatchString(low) && !oneOff.MatchString(low),
		strictRule.MatchString(low) && !mishap.MatchString(low) && !oneOff.MatchString(low), // "fails on any warning" is the rule
		weAlways.MatchString(low) && !describes.MatchString(low) && !mishap.MatchString(low),
		needEvery.MatchString(low), askFirst.MatchString(low), underPath.MatchString(low) && !pronounLead.MatchString(low) && !describes.MatchString(low) && !commentary.MatchString(low),
		partNever.MatchString(low) && (productPart(partNever.FindStringSubmatch(low)[1]) && !pronounLead.MatchString(low) || neverReach.MatchString(low) && !strings.HasPrefix(low, "it ")) && !describes.MatchString(low),
		canOnly.MatchString(low) && !pronounLead.MatchString(low) && !describes.MatchString(low),
		mustNotHarm.MatchString(low) && !describes.MatchString(low) && !mishap.MatchString(low) && !strings.Contains(low, " but "),
		everyDoes.MatchString(low) && !mishap.MatchString(low) && !describes.MatchString(low) && !pronounLead.MatchString(low),
		groupNot(wantToBe, pronounLead, low):
	default:
		return false
	}
	if choice, old := foldOld(s); old != "" && hasChoice(choice) && (strings.Contains(low, " instead of ") || strings.Contains(low, " rather than ")) {
		// "Alerts should go to PagerDuty now instead of Discord": a rule
		// that replaces a choice is a decision replaced.
		r.decisionBody(s, true)
		return true
	}
	if i := strings.Index(low, ", "); i > 0 && strings.Count(low, ", ") == 1 && !strings.HasPrefix(low[i+2:], "and ") && secondRule(low[:i], low[i+2:]) {
		// "Downsample to 5-minute averages after 30 days, raw data is
		// dropped after 90": two rules, each whole on its own.
		r.add(item{kind: "constraint", text: s[:i]})
		r.add(item{kind: "constraint", text: capitalise(strings.TrimRight(s[i+2:], ". "))})
		return true
	}
	if i := strings.Index(low, ", and "); i > 0 && refuseRule.MatchString(low[i+6:]) {
		// "OTA images must be signed, and the bootloader refuses
		// anything unsigned": two rules.
		r.add(item{kind: "constraint", text: s[:i]})
		r.add(item{kind: "constraint", text: capitalise(strings.TrimRight(s[i+6:], ". "))})
		return true
	}
	if loc := ruleAnd.FindStringSubmatchIndex(low); loc != nil && loc[0] > 0 {
		// "migrations must be reversible, and never edit one that has
		// been merged": two rules.
		r.add(item{kind: "constraint", text: strings.TrimRight(s[:loc[0]], ", ")})
		r.add(item{kind: "constraint", text: s[loc[2]:loc[3]]})
		return true
	}
	r.add(item{kind: "constraint", text: s})
	return true
}

// secondRule reports whether a rule's clause after its comma, tail, is
// a rule of its own on how often, how long or how much, and the clause
// before it one too ("devices report every 60 seconds, never more often
// than every 10").
func secondRule(head, tail string) bool {
	timed := func(s string) bool {
		return retainRule.MatchString(s) || cadenceRule.MatchString(s) || reportEvery.MatchString(s) || refuseRule.MatchString(s) || maxRule.MatchString(s) || cappedAt.MatchString(s)
	}
	if !timed(head) {
		return false
	}
	return timed(tail) || strings.HasPrefix(tail, "never ") && strings.ContainsAny(tail, "0123456789") || imperativeRule.MatchString(tail)
}

// ruleAnd: a second rule joined to a first by ", and".
var ruleAnd = mustPattern(`,\s+and\s+((?:never|always|don'?t|do not|make sure)\s+.+)$`)

// splitRules splits a rule list at ";", enumerations or ", and".
func splitRules(body string) []string {
	var parts []string
	switch {
	case strings.Contains(body, ";"):
		parts = strings.Split(body, ";")
	case len(enumInner.FindAllStringIndex(body, -1)) >= 2:
		parts = splitEnum(body)
	case strings.Count(body, ",") >= 2 || strings.Contains(body, ", and "):
		parts = ruleSep.Split(body, -1)
	default:
		parts = []string{body}
	}
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(p), "and ")); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// splitReason splits "GORM — we write SQL by hand" into the item and its
// reason.
func splitReason(s string) (string, string) {
	low := lower(s)
	for _, loc := range reasonSep.FindAllStringIndex(low, -1) {
		if loc[0] == 0 {
			continue
		}
		if strings.TrimSpace(low[loc[0]:loc[1]]) == "since" && temporalSince.MatchString(low[loc[1]:]) {
			continue
		}
		item := strings.TrimRight(s[:loc[0]], ",;: ")
		why := strings.TrimSpace(s[loc[1]:])
		sep := lower(s[loc[0]:loc[1]])
		if strings.Contains(sep, "it") || strings.Contains(sep, "they") || strings.Contains(sep, "we need") || strings.Contains(sep, "we want") || strings.Contains(sep, "need") ||
			strings.Contains(sep, "less") || strings.Contains(sep, "fewer") || strings.Contains(sep, "no ") {
			// the words of the separator that belong to the reason
			why = strings.TrimSpace(strings.TrimLeft(sep, ", ")) + " " + why
		}
		return item, strings.TrimRight(why, ". ")
	}
	if k := strings.Index(low, " instead, "); k > 0 {
		// "host the API on Fly.io instead, Vercel functions time out":
		// what follows the change is why.
		if rest := strings.TrimSpace(s[k+len(" instead, "):]); len(strings.Fields(rest)) >= 2 && !insteadThen.MatchString(lower(rest)) {
			return s[:k+len(" instead")], strings.TrimRight(rest, ". ")
		}
	}
	return strings.TrimRight(s, ",;: "), ""
}

// leaveAlone: something the agent is not to touch.
var leaveAlone = mustPattern(`^(?:please\s+)?leave\s+(?:the|our|my|this|that|these|those|all|every|any)\s+[\w.\-/ ]{2,50}?\s+alone[.!]*$`)

// noLongerNeed: support of something, or its use, no longer needed.
var noLongerNeed = mustPattern(`^(?:(?:we|you)\s+(?:no longer|don'?t|do not)\s+need\s+to\s+|no\s+need\s+to\s+)(?:support|use|run|keep|maintain|target)\s+([\w.\-+#/ ]{2,40}?)(?:\s+(?:anymore|any more|after all))?$|^([\w.\-+#/ ]{2,40}?)\s+(?:support\s+)?(?:is|are)\s+(?:no longer|not)\s+(?:needed|required|necessary)(?:\s+(?:anymore|any more|after all))?$`)

// allowedNow: what the user now lets the agent do, and its object ("it"
// names no rule's object).
// fineNow: an option said to be allowed now ("lodash is fine now, it's
// tree-shaken", "Lodash is OK again").
var fineNow = mustPattern(`^(.{2,40}?)\s+(?:is|are)\s+(?:fine|ok|okay|allowed)\s+(?:now|again)(?:,\s+(?:it'?s|it is|they'?re|i'?m|we'?re|since|because|as|that'?s)\b.{0,120})?$`)

// forgetAbout: a rule taken back by what it was about ("forget what I
// said about tabs", "ignore my rule about commit messages").
var forgetAbout = mustPattern(`^(?:forget|ignore|scratch|disregard|never ?mind|drop)\s+(?:what i said|what i told you|my (?:rule|rules|instruction|instructions)|the (?:rule|rules) i (?:gave you|set|made))\s+(?:about|on)\s+([^,;]{2,40}?)$`)

var allowedNow = mustPattern(`^(?:(?:ok|okay|fine|alright)[,\s]+)?(?:you can|you may|we can|feel free to|it'?s (?:ok|okay|fine) to|go ahead and)\s+((?:use|add|pull in|install|touch|edit|change|modify|call|push|merge|commit|deploy|import|depend on)\s+(.{2,60}?))(?:\s+(?:now|from now on|again|after all|going forward|if you need to|if needed|whenever))*(?:,\s+(?:it'?s|it is|they'?re|i'?m|we'?re|since|because|as|that'?s)\b.{0,120})?$`)

// mustNotHarm: what the thing being built must never do to data or
// code ("It should never delete remote files unless I pass --prune").
var mustNotHarm = mustPattern(`^(?:it|the\s+[\w\-]+(?:\s[\w\-]+)?)\s+(?:must|should|shall|will|may|can)\s+(?:never|not)\s+(?:ever\s+)?(?:delete|remove|drop|overwrite|wipe|purge|truncate|modify|push|commit|upload|expose|leak|share|log|print)\s+\S`)

// backInScope: something left out, said to be in again.
var backInScope = mustPattern(`^(?:the\s+|our\s+)?[\w.\-+#/ ]{2,40}?\s+(?:is|are)\s+back\s+(?:in\s+scope|on\s+the\s+table|on\s+the\s+roadmap|in\s+the\s+plan)\b`)

// dashSep: a dash between two clauses.
var dashSep = mustPattern(`\s+(?:—|–|--)\s+`)

// switchedTo: a switch already made ("We've moved to pnpm", "we
// switched from Yarn to pnpm last week").
var switchedTo = mustPattern(`^(?:we|i)(?:'ve|\s+have)?\s+(?:already\s+)?(?:switched|moved|migrated|changed)\s+(?:everything\s+|over\s+)?(?:from\s+([\w.+#\-/]+(?:\s[\w.+#\-/]+)?)\s+)?to\s+([\w.+#\-/]+(?:\s[\w.+#\-/]+)?)(?:\s+(?:last week|last month|yesterday|recently|already|a while ago|today|this week))?$`)

// idGoWith: "I'd go with Tailwind", the user's pick said softly.
var idGoWith = mustPattern(`^(?:i'?d|i would|we'?d|we would)\s+(?:go with|go for|pick|choose|use)\s+([\w.+#\-/]+(?:\s[\w.+#\-/]+){0,2})$`)

// goingWith: a choice said as what one goes with ("going with Tailwind",
// "I'd go with Tailwind").
var goingWith = mustPattern(`^(?:i'?d\s+|i\s+would\s+|we'?d\s+)?(?:going|go)\s+with\s+`)

// stdLib: the language's own library, as an option.
var stdLib = mustPattern(`^(?:the\s+)?(?:go\s+|python\s+|rust\s+|node\s+|java\s+)?(?:stdlib|std|standard\s+library|standard\s+lib|built-?in\s+[\w\-/.]+)\b|\bfrom\s+the\s+(?:stdlib|standard\s+library)$`)

// twoPartsAre: two parts and their options in one sentence; imUsing and
// optionAnd: the options a user says they use, and what joins them.
var (
	twoPartsAre = mustPattern(`^((?:the|our)\s+[\w\- ]{1,25}?\s+(?:is|are)\s+([\w.\-+#/]+(?:\s[\w.\-+#/]+)?))(?:,|;|,?\s+and)\s+((?:the|our)\s+[\w\- ]{1,25}?\s+(?:is|are)\s+([\w.\-+#/]+(?:\s[\w.\-+#/]+)?))$`)
	imUsing     = mustPattern(`^(?:i'?m|im|i am)\s+using\s+([\w.+#\-/]+(?:(?:,\s+|,?\s+and\s+|\s+\+\s+)[\w.+#\-/]+){0,4})$`)
	optionAnd   = mustPattern(`,?\s+and\s+|,\s+|\s+\+\s+`)
)

// ratherThan: "rather than Kafka, let's use NATS": the option passed over,
// then what is chosen.
var ratherThan = mustPattern(`^(?:rather than|instead of)\s+([\w.\-+#/]+(?:\s[\w.\-+#/]+)?),\s+(.+)$`)

// moveNotWorth: a move to an option, or its addition, judged not worth
// it.
var moveNotWorth = mustPattern(`^(?:(?:migrating|moving|switching|porting|upgrading|changing|going)\s+(?:over\s+|everything\s+)?to|adding|introducing|pulling in|bringing in)\s+([\w.\-+#/]+(?:\s[\w.\-+#/]+)?)\s+(?:(?:isn'?t|is not|wouldn'?t be|would not be|won'?t be|will not be)\s+(?:really\s+)?(?:worth|needed|necessary|a good idea)|(?:is|would be|will be|seems|feels|sounds)\s+(?:like\s+)?(?:\w+\s+)?(?:overkill|too\s|pointless|unnecessary|a waste|not worth))`)

// insteadThen: what follows "X instead," as another instruction, not a
// reason.
var insteadThen = mustPattern(`^(?:and|but|then|so|also|plus|or|use|keep|put|move|run|add|make|we'?ll|we will|let'?s|please|just|for|with)\b`)

// cutOldRemark splits off a last clause that speaks of the option left
// behind ("…to a small Hetzner box, Heroku dynos sleep"): the reason for
// the change.
func cutOldRemark(s, old string) (choice, remark string) {
	k := strings.LastIndex(s, ", ")
	if k <= 0 || old == "" {
		return s, ""
	}
	tail := lower(s[k+2:])
	for _, w := range words(old) {
		if len(w) > 2 && !stopWords[w] && strings.Contains(" "+tail+" ", " "+w+" ") {
			return s[:k], strings.TrimSpace(s[k+2:])
		}
	}
	return s, ""
}

// cutJudgement splits a choice from a judgement after its last comma, its
// reason ("Use GORM after all, sqlc is too much boilerplate", "… to
// OneSignal, Firebase is too heavy"). Only choices are cut so: in a list of
// rejected options such a remark is not a reason ("no axios, fetch is
// fine").
func cutJudgement(s string) (choice, judged string) {
	if k := strings.LastIndex(s, ", "); k > 0 && judgement.MatchString(lower(s[k+2:])) {
		return s[:k], strings.TrimSpace(s[k+2:])
	}
	return s, ""
}

// judgedOption returns the option a judgement after a choice is about,
// and what it says of it, when that is another option than the ones the
// choice names ("Spark is overkill here" after "Go with DuckDB").
func judgedOption(judged, choice string) (opt, because string) {
	if p := possessiveJudged.FindStringSubmatch(lower(judged)); p != nil && judgement.MatchString(lower(judged)) &&
		sameCategory([]string{p[1]}, words(choice)) && !strings.Contains(lower(choice), p[1]) {
		// "Vitest wins, Jest's ESM support is still painful": a part of
		// the other option of the same kind judged is that option's.
		return judged[:len(p[1])], strings.TrimSpace(judged)
	}
	m := judgedSubject.FindStringSubmatchIndex(lower(judged))
	if m == nil {
		return "", ""
	}
	opt = judged[m[2]:m[3]]
	if !isChoiceWord(opt, false) || strings.Contains(lower(choice), lower(opt)) {
		return "", ""
	}
	// The judgement is of the option itself ("Spark is overkill"), not of
	// a thing it names ("the Postgres queue idea was a mistake").
	if !judgement.MatchString(lower(opt)+lower(judged[m[3]:])) || !judgedVerb.MatchString(lower(judged[m[3]:])) {
		return "", ""
	}
	return opt, strings.TrimSpace(judged[m[4]:])
}

// judgedVerb: what follows an option judged on its own.
var judgedVerb = mustPattern(`^\s+(?:is|are|was|were|seems|feels|looks|isn'?t|aren'?t|can'?t|cannot|won'?t|doesn'?t|does not|needs?|takes?|has|have|requires?|adds?|costs?|runs|ran|chokes|falls|keeps|already|would)\b`)

var judgedSubject = mustPattern(`^(?:the\s+)?([\w.\-/+]+)\s+(?:(?:is|are|was|were|seems|feels|looks)\s+)?(\S.*)$`)

// viaOption reports whether opt, after "through" or "via", names an
// option, or after "on" a well-known one ("hosting on Render", not
// "uploads on Mondays").
func viaOption(prep, opt string) bool {
	if lower(prep) == "on" {
		// "on Tauri 2": a known option, perhaps with its version
		f := strings.Fields(lower(opt))
		return categoryOf[lower(opt)] != "" || len(f) == 2 && categoryOf[f[0]] != "" && strings.IndexFunc(f[1], unicode.IsDigit) == 0
	}
	if f := strings.Fields(opt); len(f) == 2 {
		// "via Expo Router": a name of two words
		return isNamed(f[0]) && isNamed(f[1])
	}
	return isChoiceWord(opt, false)
}

// insteadNamed reports whether s is a short "Remeda instead": a named
// option first, the change marked.
func insteadNamed(s, low string) bool {
	f := strings.Fields(s)
	return len(f) <= 4 && strings.HasSuffix(low, " instead") && isChoiceWord(f[0], false) && !voteNot[lower(bare(f[0]))] && lower(bare(f[0])) != "nothing"
}

// voteOption reports whether the words before "…, yes" or "…, no" name
// an option ("Homebrew tap, yes"; not "thanks, no").
func voteOption(s string) bool {
	f := strings.Fields(s)
	return len(f) <= 3 && isChoiceWord(f[0], false) && !voteNot[lower(bare(f[0]))]
}

var voteNot = map[string]bool{"thanks": true, "ok": true, "okay": true, "sure": true, "well": true, "hmm": true, "fine": true,
	"great": true, "cool": true, "right": true, "so": true, "that": true, "this": true, "it": true, "maybe": true, "yes": true,
	"no": true, "oh": true, "ah": true, "honestly": true, "again": true, "and": true, "but": true}

// conventional reports whether s says a part follows a convention: a
// named one (PEP 8, sysexits, RFC 7807) or one called so ("the style
// guide"), not "the bug follows the cursor".
func conventional(s, low string) bool {
	m := followsRule.FindStringSubmatchIndex(low)
	if m == nil {
		return false
	}
	return isChoiceWord(firstWord(s[m[2]:m[3]]), false) || conventionWord.MatchString(low[m[2]:m[3]])
}

var conventionWord = mustPattern(`(?:conventions?|spec|specification|standard|style|guide|guidelines|semver|sysexits|rfc|pep|format)$`)

// foldedAway reports whether s names an alternative it turns down ("X,
// not Y").
func foldedAway(s string) bool { _, old := foldOld(s); return old != "" }

func firstReason(s string) string { i, _ := splitReason(s); return i }

// willBeOption: what follows "will be" starts with a named option, or
// with a known one or an acronym after a qualifier ("plain HTML with htmx",
// "a Go service"; not "a Disaster").
func willBeOption(s string) bool {
	if isChoiceWord(firstWord(s), false) {
		return true
	}
	w := firstWord(unqualified(s))
	return w != firstWord(s) && (categoryOf[lower(w)] != "" || len(w) > 1 && strings.ToUpper(w) == w && strings.ToLower(w) != w)
}

// unqualified drops the words before the option in "plain HTML with
// htmx", "a Go service", "just Postgres".
func unqualified(s string) string {
	for {
		first, rest, ok := strings.Cut(strings.TrimSpace(s), " ")
		if !ok || !qualifiers[lower(first)] {
			return s
		}
		s = rest
	}
}

var qualifiers = map[string]bool{"a": true, "an": true, "plain": true, "vanilla": true, "pure": true, "just": true, "simple": true, "standard": true}

func lastWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[len(f)-1]
	}
	return ""
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return strings.Trim(f[0], ",.;:")
	}
	return ""
}

func trimAny(s string, prefixes ...string) string {
	for _, p := range prefixes {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return s[len(p):]
		}
	}
	return s
}

// optionPhrase reports whether s only names options: its first word a
// well-known or named option, six words at most, and at most one word that
// is neither an option nor a joining word ("Tailwind via the standalone
// CLI", not "Each worker owns its own queue").
func optionPhrase(s string) bool {
	f := strings.Fields(s)
	if len(f) == 0 || len(f) > 6 || commentary.MatchString(" "+lower(s)) || pronounLead.MatchString(lower(s)) {
		return false
	}
	if first := strings.Trim(f[0], ".,"); categoryOf[lower(first)] == "" && !ofFamily(lower(first)) && !spelledName(first) {
		return false // a capital at the start of a sentence names nothing
	}
	plain := 0
	for _, w := range f[1:] {
		lw := lower(strings.Trim(w, ".,"))
		if !joinWord[lw] && categoryOf[lw] == "" && !isNamed(w) {
			plain++
		}
	}
	return plain <= 1
}

// knownOption reports whether s names an option by more than a capital
// at the start of a sentence ("Vitest wins", not "Debuggability wins").
func knownOption(s string) bool {
	for _, w := range strings.Fields(s) {
		if lw := lower(strings.Trim(w, ".,")); categoryOf[lw] != "" || ofFamily(lw) || spelledName(w) {
			return true
		}
	}
	return false
}

// spelledName reports whether w is written as a name wherever it stands:
// all capitals ("HTMX") or a capital inside ("daisyUI", "tRPC").
func spelledName(w string) bool {
	r := []rune(w)
	return len(r) >= 2 && strings.ToUpper(w) == w && strings.ToLower(w) != w || innerUpper(r)
}

var (
	joinWord = map[string]bool{"+": true, "&": true, "and": true, "with": true, "via": true, "on": true, "over": true, "plus": true, "the": true, "a": true, "an": true, "for": true, "in": true}
)

// trimAnySuffix removes the first of suffixes s ends with.
func trimAnySuffix(s string, suffixes ...string) string {
	for _, x := range suffixes {
		if len(s) >= len(x) && strings.EqualFold(s[len(s)-len(x):], x) {
			return s[:len(s)-len(x)]
		}
	}
	return s
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// ruledParts are parts whose source is a rule rather than a choice
// ("secrets come from Vault, never from env files").
var ruledParts = map[string]bool{"secrets": true, "secret": true, "credentials": true, "keys": true, "tokens": true, "passwords": true,
	"config": true, "configuration": true, "settings": true, "env": true}

// readsAlone reports whether part, read on its own, settles something
// (without keeping what it read).
func (r *reader) readsAlone(part string) bool {
	probe := reader{probe: true, reads: r.reads}
	probe.sentence(part)
	return len(probe.items) > 0 && settles(probe.items)
}

// namedAfterThe reports whether one of the first two words of s (what
// follows "use the") is a name: a well-known option, or a capitalised
// word that is no acronym ("Stripe", "Keychain"; not "API", "OS").
func namedAfterThe(s string) bool {
	f := strings.Fields(s)
	for i := 0; i < len(f) && i < 2; i++ {
		w := bare(f[i])
		if categoryOf[lower(w)] != "" {
			return true
		}
		if r := []rune(w); len(r) > 1 && unicode.IsUpper(r[0]) && strings.ToUpper(w) != w {
			return true
		}
	}
	return false
}

// dataTypeWords are the words dataTypeRule needs one of.
var dataTypeWords = []string{"int", "uuid", "ulid", "decimal", "string", "cents", "minor units", "utc", "iso", "unix", "epoch", "si ", "utf-8"}

// hasDataType reports whether low holds a word dataTypeRule needs: a
// substring look before the pattern, which every statement would try.
func hasDataType(low string) bool {
	return slices.ContainsFunc(dataTypeWords, func(w string) bool { return strings.Contains(low, w) })
}

// usedNow finds, in a clause said after an option turned down ("it's
// sqlx with …", "it's axum"), the option used instead: its bounds in s.
// Not a reason said the same way ("it's Kotlin anyway", "it's 30 KB for
// two fades"), nor the option turned down itself.
func usedNow(s, other string) (at, end int, ok bool) {
	m := itsNow.FindStringSubmatchIndex(lower(s))
	if m == nil || !isChoiceWord(s[m[2]:m[3]], false) || unicode.IsDigit(rune(s[m[2]])) ||
		strings.EqualFold(s[m[2]:m[3]], other) || strings.Contains(lower(s), " anyway") {
		return 0, 0, false
	}
	return m[2], m[3], true
}

// wordAfter returns the word of s after sep ("" if sep is not in s).
func wordAfter(s, sep string) string {
	_, rest, ok := strings.Cut(s, sep)
	if !ok {
		return ""
	}
	return strings.Trim(firstWord(rest), ".,;")
}

// beforeAnd is s up to its first ", and ".
func beforeAnd(s string) string {
	if i := strings.Index(s, ", and "); i > 0 {
		return s[:i]
	}
	return s
}

func capitalise(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}

// eachPlaced records "X in A, Y in B" said of a part: a decision for each
// named option and the place it goes (all named, or none is recorded).
func (r *reader) eachPlaced(part, body string, change bool) bool {
	var picks []string
	for _, p := range strings.Split(body, ",") {
		p = strings.TrimRight(strings.TrimSpace(p), ". ")
		m := optionPlace.FindStringSubmatch(p)
		if m == nil || !(isNamed(m[1]) || categoryOf[lower(m[1])] != "") {
			return false
		}
		picks = append(picks, p)
	}
	for _, p := range picks {
		r.decisionBody("Use "+p+" for "+lower(part), change)
	}
	return true
}

// doesInstead records, in a change, a clause that says what another named
// option does ("cargo-dist builds the installers for us") as that option
// chosen, with the clause as its reason.
func (r *reader) doesInstead(p, old string) bool {
	m := namedDoes.FindStringSubmatch(p)
	if m == nil {
		return false
	}
	w := firstWord(m[1]) // "react query covers the server state"
	if !(categoryOf[lower(w)] != "" || isChoiceWord(w, false) || strings.Contains(w, "-") && lower(w) == w) {
		return false
	}
	r.decision(item{kind: "decision", text: "Use " + m[1], why: strings.TrimRight(m[2], ". "), change: true, old: old})
	return true
}

// lastName is the last option a list turned down so far, or "".
func lastName(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return names[len(names)-1]
}

// replacing marks the decisions from item from on as replacing the
// well-known option judgement judges ("Cron was a bad idea"), unless they
// name what they replace.
func (r *reader) replacing(from int, judgement string) {
	m := judgedSubject.FindStringSubmatch(lower(judgement))
	if m == nil {
		return
	}
	opt := strings.TrimSuffix(m[1], "'s") // "Prisma's migrations …"
	if categoryOf[opt] == "" {
		return
	}
	for i := from; i < len(r.items); i++ {
		if it := &r.items[i]; it.kind == "decision" && it.old == "" && !strings.Contains(lower(it.text), opt) {
			it.old, it.change = opt, true
		}
	}
}

// namesKnown reports whether s names a well-known option ("Prisma's
// migrations …").
func namesKnown(s string) bool {
	for _, w := range words(s) {
		if categoryOf[strings.TrimSuffix(w, "'s")] != "" {
			return true
		}
	}
	return false
}

// rejectsOnly reports whether the items at idx are all rejections (and
// there is one).
func rejectsOnly(items []item, idx []int) bool {
	for _, i := range idx {
		if items[i].kind != "reject" {
			return false
		}
	}
	return len(idx) > 0
}

// alwaysNamed reports whether s says what a thing always is, with a name
// ("int64", "UTC", "ULIDs"), not a state ("the build is always red").
func alwaysNamed(s, low string) bool {
	m := alwaysIs.FindStringSubmatchIndex(low)
	if m == nil || pronounLead.MatchString(low) || len(s) != len(low) {
		return false
	}
	w := s[m[2]:m[3]]
	return techToken(w) || isChoiceWord(w, false)
}

// techToken reports whether w is a name made of letters and digits, as
// formats, protocols and versions are named ("bf16", "utf8", "http2",
// "es2022"), not a number or a version alone ("42", "v2").
func techToken(w string) bool {
	w = bare(w)
	letters, digits := 0, 0
	for _, r := range w {
		switch {
		case unicode.IsLetter(r):
			letters++
		case unicode.IsDigit(r):
			digits++
		case r != '-' && r != '.':
			return false
		}
	}
	return letters >= 2 && digits > 0 && len(w) >= 3 && unicode.IsLetter([]rune(w)[0])
}

// sentenceCase lower-cases the capital a sentence gave its first word
// ("Training code"), not an acronym or a name ("API", "GraphQL").
func sentenceCase(s string) string {
	w, _, _ := strings.Cut(s, " ")
	if len(w) < 2 || lower(w[1:]) != w[1:] {
		return s
	}
	return lower(w[:1]) + s[1:]
}

// tidy trims punctuation and markup around a recorded text.
func tidy(s string) string {
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "\"'“”`*_,;:.—– "))
}

// hasContent reports whether a statement says more than a verb.
func hasContent(s string) bool {
	n := 0
	for _, w := range words(s) {
		if !stopWords[w] {
			n++
		}
	}
	return n > 0
}

// lower lower-cases s rune by rune where that keeps each rune's length in
// bytes, and leaves the rest (and bytes that are not UTF-8) as they are:
// patterns are matched on the lower-cased text and their offsets read back
// from s, which strings.ToLower would shift ("İ" grows a byte, the Kelvin
// sign loses two, an invalid byte becomes three).
func lower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if l := unicode.ToLower(r); r != utf8.RuneError && utf8.RuneLen(l) == n {
			b = utf8.AppendRune(b, l)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

// amountOf reports a number of a known unit ("2 spaces", "4 workers").
func amountOf(s string) bool {
	f := strings.Fields(s)
	return len(f) == 2 && f[0][0] >= '0' && f[0][0] <= '9' && categoryOf[lower(f[1])] != ""
}

// optionLed reports whether part opens with an option: a well-known one,
// Go, or after "use" (or within a list) any name.
func optionLed(part string, named bool) bool {
	w := firstWord(part)
	return categoryOf[lower(w)] != "" || w == "Go" || named && isChoiceWord(w, false)
}
