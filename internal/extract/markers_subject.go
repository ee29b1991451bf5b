package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file decides whether a new decision replaces an active one: same
// subject, different choice.

// categories groups well-known options that answer the same question; two
// decisions naming options of one category (and no different subjects)
// are about the same thing.
var categories = map[string][]string{
	"database":      {"postgres", "postgresql", "pg", "mysql", "mariadb", "sqlite", "mongodb", "mongo", "dynamodb", "cockroachdb", "duckdb", "cassandra", "oracle", "mssql", "firestore", "supabase", "clickhouse", "timescaledb", "timescale", "influxdb", "questdb", "victoriametrics", "neo4j", "couchdb", "planetscale", "neon", "tidb", "yugabytedb", "surrealdb", "libsql", "turso", "rds", "aurora", "cloudsql", "alloydb"},
	"queue":         {"rabbitmq", "rabbit", "nats", "kafka", "sqs", "pulsar", "activemq", "zeromq", "nsq", "jetstream", "redpanda", "kinesis", "pubsub", "pub/sub", "eventbridge"},
	"warehouse":     {"bigquery", "snowflake", "redshift", "databricks"},
	"cache":         {"redis", "memcached", "valkey", "varnish", "dragonfly", "keydb"},
	"hash":          {"bcrypt", "argon2", "argon2id", "scrypt", "md5", "sha-1", "sha1", "sha-256", "pbkdf2"},
	"api":           {"rest", "graphql", "grpc", "soap", "trpc", "json-rpc"},
	"orm":           {"gorm", "sqlx", "sqlc", "ent", "prisma", "typeorm", "sequelize", "hibernate", "sqlalchemy", "diesel", "drizzle", "mongoose", "peewee", "pgx", "jooq", "kysely"},
	"web":           {"gin", "echo", "chi", "fiber", "express", "fastify", "koa", "django", "flask", "fastapi", "rails", "nestjs", "gorilla", "axum", "actix", "hono", "laravel", "phoenix", "sinatra", "starlette", "litestar", "spring", "spring-boot", "quarkus", "micronaut", "ktor", "vapor"},
	"frontend":      {"react", "vue", "svelte", "angular", "solid", "htmx", "preact", "nextjs", "next.js", "nuxt", "remix", "astro", "sveltekit", "qwik", "flutter", "expo", "solidjs"},
	"state":         {"redux", "zustand", "mobx", "recoil", "pinia", "vuex", "jotai", "riverpod", "bloc", "xstate", "tanstack"},
	"test":          {"jest", "vitest", "mocha", "pytest", "unittest", "testify", "ginkgo", "ava", "junit", "rspec", "minitest", "xunit", "nunit", "hypothesis", "testscript", "insta", "proptest", "nextest", "criterion", "trycmd", "snapbox", "assert_cmd"},
	"errors":        {"thiserror", "anyhow", "eyre", "snafu"},
	"async-runtime": {"tokio", "async-std", "smol"},
	"wasm-runtime":  {"wasmtime", "wasmer", "wazero", "wasmedge", "extism"},
	"release":       {"cargo-dist", "cargo-release", "release-please", "semantic-release", "changesets"},
	"serde":         {"serde", "serde_json", "serde_yaml"},
	"e2e":           {"playwright", "cypress", "selenium", "puppeteer"},
	"logging":       {"zap", "zerolog", "logrus", "slog", "log4j", "winston", "pino", "loguru", "bunyan", "log15", "logback", "serilog"},
	"packages":      {"npm", "yarn", "pnpm", "bun", "poetry", "pip", "uv", "pipenv", "pipx", "hatch", "pdm", "flit", "conda", "mamba", "homebrew", "brew", "nix", "scoop", "winget", "chocolatey"},
	"build":         {"make", "bazel", "cmake", "gradle", "maven", "buck", "just", "meson", "sbt", "pants", "nx", "turborepo", "lerna", "goreleaser"},
	"bundler":       {"webpack", "vite", "esbuild", "rollup", "parcel", "turbopack", "tsup", "tsc", "swc", "babel", "unbuild", "rspack"},
	"ci":            {"jenkins", "circleci", "travis", "buildkite", "drone", "teamcity", "github-actions", "gitlab-ci", "gh", "argo", "tekton", "fastlane"},
	"orchestration": {"kubernetes", "k8s", "nomad", "swarm", "ecs", "eks", "gke", "aks", "openshift", "k3s"},
	"mesh":          {"istio", "linkerd", "consul"},
	"containers":    {"podman", "docker-compose", "containerd", "colima"},
	"utility":       {"lodash", "underscore", "ramda"},
	"dates":         {"moment", "dayjs", "date-fns", "luxon"},
	"indent":        {"tabs", "spaces"},
	"certs":         {"cert-manager", "letsencrypt", "acm"},
	"secrets":       {"vault", "sops", "doppler", "infisical"},
	"flags":         {"launchdarkly", "unleash", "flagsmith", "growthbook", "configcat"},
	"components":    {"shadcn", "shadcn/ui", "mui", "chakra", "mantine", "antd", "radix"},
	"charting":      {"recharts", "chart.js", "d3", "echarts", "highcharts", "plotly", "visx", "nivo"},
	"compute":       {"ec2", "fargate", "lambda", "graviton"},
	"gitops":        {"argocd", "flux", "fluxcd"},
	"manifests":     {"helm", "kustomize"},
	"autoscaler":    {"karpenter", "keda"},
	"hosting":       {"heroku", "render", "fly.io", "vercel", "netlify", "railway", "cloudflare", "aws", "gcp", "azure", "digitalocean", "hetzner", "linode"},
	"iac":           {"terraform", "tf", "pulumi", "cloudformation", "cdk", "ansible", "opentofu", "crossplane", "terragrunt"},
	"auth":          {"jwt", "oauth", "oauth2", "saml", "paseto", "keycloak", "auth0", "sessions"},
	"styling":       {"tailwind", "bootstrap", "sass", "styled-components", "css", "vanilla-extract", "emotion", "stitches", "linaria", "css-modules", "unocss"},
	"motion-lib":    {"framer-motion", "gsap", "lottie", "motion-one", "react-spring"},
	"ui-docs":       {"storybook", "ladle", "histoire"},
	"visual-tests":  {"chromatic", "percy", "applitools", "backstopjs"},
	"icons":         {"lucide", "heroicons", "phosphor", "fontawesome", "tabler"},
	"search":        {"elasticsearch", "opensearch", "meilisearch", "typesense", "algolia", "solr", "vespa", "qdrant", "weaviate", "pinecone", "milvus", "pgvector", "chroma"},
	"metrics":       {"prometheus", "datadog", "grafana", "opentelemetry", "sentry", "posthog", "honeycomb", "newrelic", "jaeger", "tempo", "loki", "mixpanel", "amplitude", "plausible"},
	"wire":          {"protobuf", "json", "msgpack", "avro", "thrift", "cbor"},
	"jvm-cache":     {"caffeine", "ehcache", "guava"},
	"jobs":          {"celery", "rq", "sidekiq", "resque", "dramatiq", "huey", "procrastinate", "bullmq", "oban", "good_job", "river", "hangfire"},
	"payments":      {"stripe", "paddle", "braintree", "adyen", "mollie", "checkout.com", "lemonsqueezy"},
	"proxy":         {"caddy", "nginx", "traefik", "haproxy", "envoy", "kong", "ingress-nginx", "contour"},
	"storage":       {"s3", "r2", "gcs", "minio", "b2", "azure-blob", "ceph"},
	"license":       {"mit", "apache-2.0", "apache", "gpl", "bsd", "mpl", "agpl", "lgpl", "isc", "unlicense"},
	"migrations":    {"alembic", "golang-migrate", "flyway", "liquibase", "goose", "atlas", "dbmate", "knex", "prisma-migrate"},
	"cli":           {"cobra", "urfave", "kingpin", "click", "argparse", "typer", "commander", "clap", "yargs", "oclif", "argh", "bpaf", "lexopt", "pico-args", "gumdrop"},
	"progress":      {"indicatif", "tqdm", "ora", "progressbar", "rich"},
	"scheduler":     {"airflow", "dagster", "prefect", "luigi", "cron", "temporal"},
	"dataframe":     {"polars", "pandas", "dask", "vaex"},
	"processing":    {"spark", "flink", "dbt"},
	"email":         {"postmark", "sendgrid", "mailgun", "ses", "resend", "mailchimp"},
	"push":          {"onesignal", "fcm", "apns", "pusher"},
	"realtime":      {"sse", "server-sent", "websocket", "websockets", "socket.io", "long-polling", "webrtc", "mqtt", "centrifugo", "ably", "coap", "lwm2m"},
	"rtos":          {"zephyr", "freertos", "embassy", "rtic", "nuttx", "mbed", "arduino", "esp-idf", "threadx", "tock"},
	"radio":         {"lorawan", "lora", "nb-iot", "lte-m", "wi-fi", "wifi", "ble", "bluetooth", "zigbee", "thread", "matter", "sigfox", "cellular", "ethernet"},
	"commerce":      {"medusa", "shopify", "saleor", "commercetools", "bigcommerce", "magento", "woocommerce", "vendure", "swell"},
	"cms":           {"sanity", "contentful", "strapi", "storyblok", "prismic", "directus", "payload", "ghost", "wordpress", "hygraph", "keystatic", "tina"},
	"image-cdn":     {"imgix", "cloudinary", "imagekit", "thumbor", "imgproxy"},
	"tax":           {"avalara", "taxjar", "stripe-tax", "anrok", "vertex-tax"},
	"shipping":      {"easypost", "shippo", "shipstation", "sendcloud", "shipengine"},
	"llm":           {"gpt-4o", "gpt-4", "gpt-4.1", "gpt-5", "o1", "o3", "claude", "sonnet", "opus", "haiku", "gemini", "llama", "mistral", "mixtral", "qwen", "deepseek"},
	"llm-lib":       {"langchain", "llamaindex", "dspy", "haystack", "semantic-kernel", "instructor", "litellm", "langgraph"},
	"llm-evals":     {"promptfoo", "ragas", "langsmith", "braintrust", "deepeval", "langfuse", "helicone"},
	"paging":        {"pagerduty", "opsgenie", "victorops", "incident.io", "squadcast"},
	"mqtt-broker":   {"emqx", "mosquitto", "hivemq", "vernemq", "nanomq"},
	"language":      {"rust", "python", "typescript", "javascript", "kotlin", "swift", "java", "ruby", "elixir", "zig", "c#", "scala", "php"},
	"desktop":       {"tauri", "electron", "wails", "qt", "gtk", "winui", "avalonia"},
	"mobile":        {"react-native", "ionic", "capacitor", "kmp", "xamarin", "maui"},
	"mobile-ui":     {"swiftui", "uikit", "appkit", "jetpack", "xml-layouts"},
	"mobile-store":  {"coredata", "core-data", "swiftdata", "sqldelight", "objectbox", "grdb"},
	"injection":     {"hilt", "dagger", "koin", "swinject", "inversify", "tsyringe", "guice"},
	"serialization": {"moshi", "gson", "kotlinx.serialization", "jackson", "codable"},
	"images":        {"kingfisher", "sdwebimage", "picasso", "fresco"},
	"ios-http":      {"alamofire", "urlsession", "moya"},
	"app-backend":   {"firebase", "appwrite", "pocketbase", "amplify"},
	"engine":        {"godot", "unity", "unreal", "bevy", "defold", "gamemaker", "love2d", "monogame", "phaser", "pygame", "raylib", "gdscript"},
	"physics":       {"jolt", "physx", "box2d", "rapier", "havok"},
	"game-audio":    {"fmod", "wwise"},
	"game-backend":  {"nakama", "photon", "playfab", "colyseus"},
	"level-editor":  {"ldtk", "ogmo"},
	"authz":         {"openfga", "casbin", "cerbos", "oso", "spicedb", "opa", "keto", "permify"},
	"scanning":      {"trivy", "snyk", "grype", "semgrep", "codeql", "dependabot", "renovate", "gitleaks", "trufflehog"},
	"token-lib":     {"jose", "jsonwebtoken", "pyjwt", "golang-jwt", "nimbus-jose"},
	"mfa":           {"totp", "webauthn", "passkeys", "passkey", "yubikey", "duo"},
	"runtime":       {"deno", "bun.js", "nodejs"},
	"config":        {"toml", "yaml", "ini", "hcl", "jsonnet", "dotenv", "viper", "koanf", "envconfig", "pydantic-settings", "dynaconf", "figment", "convict"},
	"format":        {"parquet", "logfmt", "csv", "tsv", "orc", "arrow", "ndjson", "jsonl", "feather", "sqlite-file", "xlsx", "xls", "ods"},
	"validation":    {"pydantic", "zod", "yup", "joi", "valibot", "marshmallow", "ajv", "cerberus"},
	"site":          {"hugo", "jekyll", "eleventy", "docusaurus", "gatsby", "mkdocs", "hexo", "vitepress", "starlight"},
	"experiments":   {"mlflow", "wandb", "comet", "neptune", "tensorboard", "clearml"},
	"ml":            {"pytorch", "tensorflow", "jax", "keras", "scikit-learn", "sklearn", "xgboost", "lightgbm", "lightning", "pytorch-lightning", "huggingface", "transformers"},
	"data-versions": {"dvc", "lakefs", "git-lfs"},
	"tuning":        {"optuna", "hyperopt", "ray-tune"},
	"serving":       {"bentoml", "torchserve", "triton", "vllm", "kserve", "seldon", "tgi"},
	"distributed":   {"ray", "deepspeed", "fsdp", "horovod"},
	"pipelines":     {"kubeflow", "metaflow", "zenml", "flyte", "kedro"},
	"model-format":  {"onnx", "torchscript", "safetensors", "gguf"},
	"gpu":           {"modal", "runpod", "replicate", "coreweave", "sagemaker", "vertex"},
	"kafka-client":  {"franz-go", "sarama", "confluent-kafka-go", "kafkajs", "kafka-go", "librdkafka", "kafka-python", "aiokafka", "rdkafka"},
	"db-driver":     {"clickhouse-go", "ch-go", "psycopg", "psycopg2", "psycopg3", "asyncpg", "mysql2", "node-postgres", "go-sql-driver", "lib/pq", "mongo-go-driver", "pymongo", "motor"},
	"test-deps":     {"testcontainers", "localstack", "wiremock", "msw", "gomock", "mockery", "mockito", "mockall", "nock", "vcr", "pytest-mock", "moto"},
	"http-client":   {"axios", "httpx", "requests", "aiohttp", "resty", "superagent", "node-fetch", "reqwest", "okhttp", "retrofit", "urllib3", "ureq"},
	"lint":          {"eslint", "prettier", "biome", "ruff", "golangci-lint", "rubocop", "clippy", "mypy", "pyright", "sqlfluff", "sqlfmt", "shellcheck", "hadolint", "stylelint"},
	"ingestion":     {"fivetran", "airbyte", "dlt", "meltano", "stitch", "singer", "debezium", "hevo"},
	"dashboards":    {"looker", "metabase", "superset", "tableau", "lightdash", "redash", "hex", "grafana-dashboards", "powerbi"},
	"data-quality":  {"elementary", "soda", "great_expectations", "montecarlo", "dbt-expectations"},
	"workflow":      {"nextflow", "snakemake", "cromwell", "wdl", "cwl", "galaxy", "toil", "miniwdl"},
	"aligner":       {"bwa", "bwa-mem", "bwa-mem2", "minimap2", "bowtie2", "hisat2", "star", "parabricks", "dragen"},
	"variant-call":  {"deepvariant", "gatk", "haplotypecaller", "freebayes", "strelka2", "glnexus", "genotypegvcfs", "bcftools", "octopus"},
	"genome-build":  {"grch38", "grch37", "hg19", "hg38", "t2t", "chm13", "t2t-chm13"},
	"hpc-scheduler": {"slurm", "pbs", "torque", "sge", "lsf", "htcondor"},
	"hpc-container": {"apptainer", "singularity", "charliecloud", "shifter"},
	"reads-format":  {"cram", "bam", "sam", "fastq", "vcf", "gvcf", "bcf"},
	"annotation":    {"vep", "snpeff", "annovar"},
	"media-server":  {"mediasoup", "janus", "livekit", "jitsi", "pion", "wowza", "red5", "ant-media", "kurento", "medialive", "ivs"},
	"stream-format": {"hls", "ll-hls", "dash", "mpeg-dash", "cmaf", "rtmp", "srt", "webrtc-whip", "whip"},
	"transcoder":    {"ffmpeg", "gstreamer", "mediaconvert", "handbrake", "x264", "x265"},
	"player":        {"hls.js", "shaka", "video.js", "videojs", "plyr", "dash.js", "exoplayer", "avplayer", "jw-player"},
	"cdn":           {"cloudfront", "fastly", "akamai", "bunny", "bunnycdn", "cloudflare-stream", "keycdn"},
	"drm":           {"widevine", "fairplay", "playready"},
	"speech":        {"whisper", "deepgram", "assemblyai", "speechmatics", "transcribe"},
	"bank-feeds":    {"gocardless", "nordigen", "plaid", "truelayer", "yapily", "tink", "saltedge"},
	"pdf":           {"weasyprint", "typst", "wkhtmltopdf", "reportlab", "pdfkit", "gotenberg", "prince", "pdfmake", "latex"},
	"accounting":    {"xero", "quickbooks", "sage", "freeagent", "beancount", "ledger-cli", "hledger"},
	"allocator":     {"jemalloc", "tcmalloc", "mimalloc", "snmalloc"},
	"hpc-parallel":  {"mpi", "openmp", "hpx", "tbb", "openacc", "charm++", "legion"},
	"gpu-portable":  {"kokkos", "raja", "sycl", "cuda", "hip", "opencl", "alpaka"},
	"hpc-io":        {"hdf5", "adios2", "netcdf", "pnetcdf", "silo"},
	"linalg":        {"eigen", "petsc", "trilinos", "blas", "lapack", "mkl", "openblas", "hypre", "armadillo"},
	"hpc-packages":  {"spack", "easybuild"},
	"cpp-test":      {"googletest", "gtest", "catch2", "doctest", "boost.test"},
	"forms":         {"react-hook-form", "formik", "final-form", "react-final-form", "tanstack-form", "felte", "vee-validate"},
	"rate-limit":    {"tower-governor", "governor", "express-rate-limit", "rate-limiter-flexible", "slowapi", "limiter"},
	"reads-qc":      {"multiqc", "fastqc", "fastp", "trimmomatic", "cutadapt", "trim-galore"},
}

var categoryOf = func() map[string]string {
	m := map[string]string{}
	for c, names := range categories {
		for _, n := range names {
			m[n] = c
		}
	}
	return m
}()

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the to of in on at by for from with without into over via per and or but as is are be been
		we our us i you it its this that these those they them my your use using used uses go going goes went let lets let's will
		would should shall can could just also only now then please instead rather than not no never always keep keeping stick
		switch switching move moving migrate migrating bump store ship deploy host support adopt run runs decision decided final
		new all one two some any more most so too very plain same other another plan it's we're we'll forward
		monday tuesday wednesday thursday friday saturday sunday january february march april june july august september
		october november december`) {
		m[w] = true
	}
	return m
}()

// words lower-cases s into words; "fly.io", "sha-1", "apache-2.0" stay whole.
func words(s string) []string {
	f := strings.FieldsFunc(lower(s), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '-' || r == '/' || r == '+' || r == '\'')
	})
	out := f[:0]
	for _, w := range f {
		if w = strings.Trim(w, ".-/'"); w != "" {
			out = append(out, w)
		}
	}
	return out
}

func stem(w string) string {
	// "cache", "caching" and "caches" are one stem, as are "upload",
	// "uploads" and "uploaded".
	for _, suf := range []string{"ing", "es", "ed", "s", "e"} {
		if len(w) > len(suf)+3 && strings.HasSuffix(w, suf) {
			return strings.TrimSuffix(w, suf)
		}
	}
	return w
}

// isChoiceWord: a named option — a known option, a word with a digit, or
// a capitalised word that does not open the text.
func isChoiceWord(raw string, first bool) bool {
	b := bare(raw)
	if !first && b == "Go" {
		return true // the language, not the verb
	}
	w := lower(b)
	if w == "" || stopWords[w] {
		return false
	}
	if categoryOf[w] != "" {
		return true
	}
	if strings.ContainsAny(w, "0123456789") {
		return true
	}
	if i := strings.IndexByte(w, '-'); i > 0 && categoryOf[w[:i]] != "" && i < len(w)-1 {
		return true // a package of a known option: "django-money", "react-query"
	}
	r := []rune(b)
	return !first && len(r) > 1 && unicode.IsUpper(r[0]) && raw != "I" || innerUpper(r)
}

// bare is a word of a sentence without the punctuation around it.
func bare(raw string) string { return strings.Trim(raw, ".,;:()'\"") }

// choices returns the named options in s (lower-case), leaving out the
// alternatives it names only to set aside ("instead of Y", "not Y").
func choices(s string) []string {
	s, _ = foldOld(s)
	if i := strings.Index(lower(s), "(instead of"); i > 0 {
		s = s[:i]
	}
	var out []string
	f := strings.Fields(s)
	for i, raw := range f {
		if isChoiceWord(raw, i == 0) {
			w := lower(bare(raw))
			if i+1 < len(f) && featureOf[w][lower(bare(f[i+1]))] {
				// "CSS variables", "CSS transitions": a feature of the
				// option, no choice of it ("CSS modules" is one).
				if c := w + "-" + lower(bare(f[i+1])); categoryOf[c] != "" {
					out = append(out, c)
				}
				continue
			}
			out = append(out, w)
		}
	}
	return out
}

// featureOf lists, for an option whose name also names a technology,
// the words after it that make a feature of it rather than the option.
var featureOf = map[string]map[string]bool{
	"css": {"variables": true, "transitions": true, "animations": true, "grid": true, "modules": true, "custom": true, "properties": true, "layers": true, "nesting": true, "containment": true},
}

// hasChoice reports whether s names an option.
func hasChoice(s string) bool {
	for i, raw := range strings.Fields(s) {
		if isChoiceWord(raw, i == 0) {
			return true
		}
	}
	return false
}

// isOption reports whether a folded alternative is worth recording as
// rejected: it names an option, or a place ("not in the database").
func isOption(s string) bool {
	l := lower(s)
	for _, raw := range strings.Fields(s) {
		w := lower(bare(raw))
		if _, last, ok := strings.Cut(w, "/"); ok && categoryOf[last] != "" {
			return true // "gorilla/mux"
		}
		if categoryOf[w] != "" || isChoiceWord(raw, false) && !strings.ContainsAny(raw[:1], "abcdefghijklmnopqrstuvwxyz") {
			return true
		}
	}
	return strings.HasPrefix(l, "in ") || strings.HasPrefix(l, "on ")
}

// isNamed reports whether s names an option: a known one or a capitalised
// name ("RabbitMQ", "Fly.io"), not a phrase such as "in v1".
func isNamed(s string) bool {
	for _, raw := range strings.Fields(s) {
		b := bare(raw)
		w, r := lower(b), []rune(b)
		if categoryOf[w] != "" || len(r) > 1 && unicode.IsUpper(r[0]) || innerUpper(r) || ofFamily(w) || modelLike(w) {
			return true
		}
	}
	return false
}

// modelLike reports whether a lower-case word is a versioned name:
// letters, a digit and a separator ("gpt-4o", "text-embedding-3-small",
// "claude-3.5-sonnet"), not a number with a unit ("512", "8k", "v2").
func modelLike(w string) bool {
	if !strings.ContainsAny(w, "0123456789") || !strings.ContainsAny(w, "-.") {
		return false
	}
	run, longest := 0, 0
	for _, r := range w {
		if r >= 'a' && r <= 'z' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest >= 3
}

// ofFamily reports whether a lower-case name joins a well-known option
// with more ("pytest-django", "django-q", "react-query"): a package of
// that option's ecosystem.
func ofFamily(w string) bool {
	parts := strings.FieldsFunc(w, func(r rune) bool { return r == '-' || r == '_' })
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if len(p) >= 3 && categoryOf[p] != "" {
			return true
		}
	}
	return false
}

// innerUpper: a name with a capital inside ("daisyUI", "tRPC", "macOS").
func innerUpper(r []rune) bool {
	for i := 1; i < len(r); i++ {
		if unicode.IsUpper(r[i]) && unicode.IsLower(r[0]) {
			return true
		}
	}
	return false
}

// findChoice returns the newest active decision (not retired) whose
// choice names term, or -1.
func findChoice(act []active, retired map[int]bool, term string) int {
	tw := words(term)
	if len(tw) == 0 {
		return -1
	}
	phrase := " " + strings.Join(tw, " ") + " "
	for i := len(act) - 1; i >= 0; i-- {
		if retired[i] {
			continue
		}
		read := act[i].reading()
		if strings.Contains(read.choice, phrase) {
			return i
		}
		// A short name of a known option: "Mongo" for MongoDB, "Postgres"
		// for PostgreSQL.
		if len(tw) == 1 && categoryOf[tw[0]] != "" {
			for _, w := range read.words {
				if w != tw[0] && categoryOf[w] == categoryOf[tw[0]] && (strings.HasPrefix(w, tw[0]) || strings.HasPrefix(tw[0], w)) {
					return i
				}
			}
		}
	}
	return -1
}

// subjectWords are the content words of s that are not named options,
// and the names that tell its part from others of its kind ("component
// c-2", "service B", "shard 1", "the v2 API"): a word with a digit or a
// capital after "for" names the part, not the option chosen for it. Such a
// name is kept with a leading '#', so it never matches a plain word.
func subjectWords(s string) map[string]bool {
	m, _ := subjectParts(s)
	return m
}

// subjectParts returns subjectWords(s) and, of them, those of the part
// named after "for" ("Paddle for payments in the EU": payments, EU).
func subjectParts(s string) (all, part map[string]bool) {
	all, part = map[string]bool{}, map[string]bool{}
	s, _ = foldOld(s)
	inPart := false // past the "for" that opens the part
	add := func(w string) {
		all[w] = true
		if inPart {
			part[w] = true
		}
	}
	afterNoun := false // the word before was a plain word of the part ("service" of "service S3")
	for i, raw := range strings.Fields(s) {
		if isChoiceWord(raw, i == 0) {
			// "component c-2", "the v2 API", "payments in the EU",
			// "service S3" (not Amazon's after a noun); not a word as
			// general as "UI" or "CI".
			b := bare(raw)
			named := b != "" && (strings.ContainsAny(b, "0123456789") || startsUpper(b))
			if w := lower(b); inPart && named && !generalAcronym[w] && (categoryOf[w] == "" || afterNoun) {
				add("#" + w)
			}
			afterNoun = false
			continue
		}
		lw := lower(bare(raw))
		afterNoun = inPart && lw != "" && !stopWords[lw] && !strings.ContainsAny(raw, ",;:")
		if b := bare(raw); inPart && i > 0 && (len(b) == 1 && b[0] >= 'A' && b[0] <= 'Z' && b != "I" || numberWords[lower(b)]) {
			add("#" + lower(b)) // "service B", "repo two"
			continue
		}
		for _, w := range words(raw) {
			switch {
			case w == "for":
				inPart = true
			case w == "instead" || w == "not" || w == "rather" || w == "over":
				inPart = false // "…, not Redis": an option turned down
			}
			if !stopWords[w] && !genericHead[w] && len(w) > 1 {
				add(stem(w))
			}
		}
	}
	return all, part
}

// narrows reports whether part, the words of a decision's part after
// "for", adds to old, an earlier decision's subject, a word that narrows
// it to a part of it ("payments in the EU", "the admin panel styling"),
// not only restates it ("the main database").
func narrows(part, old map[string]bool) bool {
	for w := range part {
		if !old[w] && !restating[w] && !manner[w] {
			return true
		}
	}
	return false
}

// manner are words that say how a part is done, not which part:
// "structured logging" is the logging.
var manner = stems("structured", "async", "asynchronous", "typed", "strict", "proper", "better", "simple", "simpler",
	"modern", "new", "faster", "lightweight", "centralized", "centralised", "automated", "automatic")

// stems is the set of the words' stems, as subjects hold them.
func stems(ws ...string) map[string]bool {
	m := make(map[string]bool, 2*len(ws))
	for _, w := range ws {
		m[w], m[stem(w)] = true, true
	}
	return m
}

// narrowedBy reports whether subject holds, beyond old's words, a word
// that names a part of old's ("admin auth" of "auth", "nightly tests" of
// "tests"), not how it is done ("structured logging" is logging).
func narrowedBy(subject, old map[string]bool) bool {
	for w := range subject {
		if !old[w] && partQualifier[w] {
			return true
		}
	}
	return false
}

// partQualifier are words that, before a part, name a part of it of its
// own: its users, its platform, its environment.
var partQualifier = stems("admin", "internal", "public", "private", "external", "mobile", "web", "desktop", "ios",
	"android", "nightly", "staging", "production", "prod", "customer", "partner", "employee", "staff", "legacy",
	"marketing", "b2b", "b2c", "eu")

// restating are words that leave a subject as it was.
var restating = map[string]bool{"main": true, "primary": true, "default": true, "whole": true, "entire": true, "overall": true,
	"general": true, "current": true, "actual": true, "actually": true, "real": true, "project": true, "app": true, "here": true,
	"everything": true, "everywhere": true, "now": true, "today": true, "time": true}

// generalAcronym are names of a kind of part, not of one part: "Vue for
// the UI" is the frontend's decision again.
var generalAcronym = map[string]bool{"ui": true, "ux": true, "api": true, "apis": true, "ci": true, "cd": true, "ci/cd": true,
	"cli": true, "db": true, "sdk": true, "http": true, "json": true, "sql": true, "orm": true, "os": true, "vm": true, "vms": true}

// numberWords name a part among others of its kind ("phase two").
var numberWords = map[string]bool{"one": true, "two": true, "three": true, "four": true, "five": true, "six": true,
	"seven": true, "eight": true, "nine": true, "ten": true}

// genericHead are words that close the name of many parts ("the training
// code", "the feature code"; "the UI layer", "the data layer"): shared,
// they do not make two decisions about one subject.
var genericHead = map[string]bool{"code": true, "logic": true, "layer": true, "side": true, "part": true, "parts": true,
	"stuff": true, "bits": true, "module": true, "modules": true, "job": true, "jobs": true}

// additive: the new decision adds to, not replaces, what was decided.
func additive(s string) bool {
	for _, w := range words(s) {
		switch w {
		case "also", "additionally", "too", "another", "well":
			return true
		}
	}
	return strings.Contains(lower(s), "in addition")
}

// sameSubject returns the active decision (not retired) that text
// replaces: it names a different option for the same subject — a shared
// subject word, or options of one category where neither names a
// different subject. -1 when there is none.
func sameSubject(act []active, retired map[int]bool, text string) int {
	if additive(text) {
		return -1
	}
	newChoices := choices(text)
	if len(newChoices) == 0 {
		return -1
	}
	newSubj, newPart := subjectParts(text)
	lowText := lower(text)
	best, bestScore := -1, 0
	for i := len(act) - 1; i >= 0; i-- {
		if retired[i] {
			continue
		}
		oldChoices := act[i].reading().choices
		if len(oldChoices) == 0 {
			continue
		}
		// Restating or extending the old choice is not a replacement.
		kept := true
		for _, c := range oldChoices {
			if !strings.Contains(lowText, c) {
				kept = false
			}
		}
		if kept {
			continue
		}
		oldSubj := act[i].reading().subject
		shared, sharedNamed := 0, 0
		for w := range newSubj {
			if oldSubj[w] {
				shared++
				if !onlyQualifiers(map[string]bool{w: true}) {
					sharedNamed++
				}
			}
		}
		score := 2 * shared
		if sharedNamed == 0 && shared > 0 && !sameWords(newSubj, oldSubj) &&
			(!onlyQualifiers(newSubj) && !onlyQualifiers(oldSubj) || !sameCategory(newChoices, oldChoices)) {
			// "Postgres for the main database", then "DuckDB for the
			// analytics database"; "Jest for unit tests", then "Playwright
			// for the end-to-end tests": a word as general as "database" or
			// "tests" in common, where each names a part of its own or the
			// options are of other kinds, is two subjects.
			score = 0
		}
		// Subjects are sets: past the shared words, each holds words of
		// its own.
		newOwn, oldOwn := len(newSubj)-shared, len(oldSubj)-shared
		if shared > 0 && newOwn > 0 && (oldOwn > 0 || narrows(newPart, oldSubj) || len(newPart) == 0 && narrowedBy(newSubj, oldSubj)) {
			// "gRPC for the orders service", then "REST for the billing
			// service"; "component c-1", then "component c-2": one kind
			// of part in common, each decision naming a part of its own.
			// "Stripe for payments", then "Paddle for payments in the EU":
			// a part of the old subject gets an option of its own.
			score = 0
		}
		if shared == 0 && sameCategory(newChoices, oldChoices) && (len(newSubj) == 0 || len(oldSubj) == 0 || onlyQualifiers(newSubj) && onlyQualifiers(oldSubj)) {
			// A subject as general as "the database" is not replaced by
			// the same kind of option for a subject of its own ("SQLite
			// for the test fixtures").
			score = 1
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

// sameWords reports whether two subjects are the same words.
func sameWords(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for w := range a {
		if !b[w] {
			return false
		}
	}
	return true
}

// onlyQualifiers: subject words that name no subject of their own.
func onlyQualifiers(m map[string]bool) bool {
	for w := range m {
		switch w {
		case "database", "databas", "db", "storage", "storag", "queu", "stat", "licens", "infrastructur", "revers", "queue", "cache", "api", "framework", "server", "frontend", "backend", "state", "test", "unit",
			"build", "bundl", "ci", "host", "hosting", "infrastructure", "styl", "cach", "search", "metric", "format", "wire", "job", "background",
			"payment", "proxy", "reverse", "license", "migration", "cli", "it", "that", "is", "modul", "we're", "need", "concurrent", "writer":
		default:
			return false
		}
	}
	return true
}

func sameCategory(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if cx, cy := categoryOf[x], categoryOf[y]; cx != "" && cx == cy {
				return true
			}
		}
	}
	return false
}

// otherKinds reports whether options a and b each name a known category
// and share none: they answer different questions.
func otherKinds(a, b []string) bool {
	known := func(cs []string) bool {
		for _, c := range cs {
			if categoryOf[c] != "" {
				return true
			}
		}
		return false
	}
	return known(a) && known(b) && !sameCategory(a, b)
}

// latest returns the newest active decision not retired, or -1.
func latest(act []active, retired map[int]bool) int {
	for i := len(act) - 1; i >= 0; i-- {
		if !retired[i] {
			return i
		}
	}
	return -1
}

// startsUpper reports whether s opens with an upper-case letter.
func startsUpper(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}
