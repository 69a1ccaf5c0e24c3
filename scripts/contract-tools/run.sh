#!/bin/sh
# Runs a third-party contract tester against a fresh instance of this checkout, as QA does:
#   scripts/contract-tools/run.sh specmatic|portman|stepci|prism-stepci general|partner-v1
# The tools are not dependencies of the project: install them once, outside the repository, into $CONTRACT_TOOLS
# (default /tmp/contract-tools):
#   npm install --prefix /tmp/contract-tools specmatic@2.55.1 @apideck/portman@1.33.0 stepci@2.8.2 @stoplight/prism-cli@5.16.0
# Specmatic runs its bundled jar with Java 17. The instance is the README's set-up (embedded database, demo data, the
# two printed keys) with three settings for testers: streams end after 3 s (SSE_MAX_DURATION_MS, so a tool reading a
# response to its end gets one), the demo student on roomy contract limits (Specmatic sends hundreds of requests in
# half a minute; the free plan allows 60 a minute and rightly answers 429 beyond), and WEBHOOK_ALLOW_PRIVATE_TARGETS=1:
# the registration examples name documentation hosts that resolve nowhere, which the public-address rule refuses
# (400 webhook_url_unresolvable) before any tester can see the operation work; what is sent to them fails and is
# retried, reaching no one.
set -eu
tool=$1 surface=$2
tools=${CONTRACT_TOOLS:-/tmp/contract-tools}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
port=${PORT:-3961}
log=$work/server.log
# The spec the tools get: the surface's bundled spec without the operations exclusions.json names, each with the API
# rule that no static example can satisfy (a sign-in minutes old, a secret shown once, a signature over the body),
# and with one security scheme, the key header the tester holds: a tool that runs each example once per security
# alternative (Specmatic) would otherwise delete each record made to be deleted once and meet its 404 twice more.
spec=$work/openapi.json
node -e '
  const fs = require("fs"), [, exclusions, surface, from, to] = process.argv;
  const excluded = new Set(JSON.parse(fs.readFileSync(exclusions, "utf8"))[surface].map((e) => e.operationId));
  const spec = JSON.parse(fs.readFileSync(from, "utf8"));
  const header = surface === "partner-v1" ? "ApiKeyHeader" : "PersonalKeyHeader";
  const onlyHeader = (security) => security?.filter((requirement) => header in requirement);
  spec.security = onlyHeader(spec.security);
  for (const item of Object.values(spec.paths))
    for (const method of Object.keys(item)) {
      if (excluded.has(item[method]?.operationId)) delete item[method];
      else if (item[method]?.security?.length) item[method].security = onlyHeader(item[method].security);
    }
  fs.writeFileSync(to, JSON.stringify(spec));' \
  "$root/scripts/contract-tools/exclusions.json" "$surface" "$root/generated/$surface/openapi.json" "$spec"

start() {
  (cd "$root" && DATA_DIR=$work/data PORT=$port SSE_MAX_DURATION_MS=3000 WEBHOOK_ALLOW_PRIVATE_TARGETS=1 \
    exec node --v8-pool-size=1 --max-semi-space-size=8 app/start.mjs >"$log" 2>&1) &
  server=$!
  i=0; until grep -aq "listening on" "$log"; do i=$((i + 1)); [ $i -lt 180 ] || { cat "$log"; exit 1; }; sleep 1; done
}
stop() { kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }
trap 'stop; rm -rf "$work"' EXIT

start
partner=$(grep -a -A1 "demo partner key" "$log" | tail -1 | tr -d ' ')
student=$(grep -a -A1 "personal API key" "$log" | tail -1 | tr -d ' ')
stop
(cd "$root" && DATA_DIR=$work/data npm run -s cli -- users plan demo@study-companion.example --plan contract --per-minute 100000 --per-day 1000000 --ai-per-hour 10000)
start
base=http://localhost:$port
if [ "$surface" = partner-v1 ]; then key=$partner; else key=$student; fi

stepci_workflow() { # a Step CI workflow of the required parameters, the key on every step, against $1
  (cd "$root" && npx redocly bundle "$spec" --dereferenced -o "$work/spec.json" >/dev/null)
  STEPCI_DISABLE_ANALYTICS=1 "$tools/node_modules/.bin/stepci" generate "$work/spec.json" "$work/workflow.yml" --checkExamples false --generateOptionalParams false >/dev/null
  node -e '
    const fs = require("fs"), yaml = require(process.argv[1] + "/node_modules/js-yaml");
    const w = yaml.load(fs.readFileSync(process.argv[2], "utf8"));
    w.config.http.baseURL = process.argv[3];
    for (const t of Object.values(w.tests)) for (const s of t.steps) s.http.headers = { ...s.http.headers, "X-Service-API-Key": process.argv[4] };
    fs.writeFileSync(process.argv[2], yaml.dump(w));' "$tools" "$work/workflow.yml" "$1" "$key"
}

case $tool in
  specmatic)
    # From the temporary directory: Specmatic writes its reports to ./build.
    (cd "$work" && PersonalKeyHeader=$key ApiKeyHeader=$key \
      java -jar "$tools/node_modules/specmatic/specmatic.jar" test "$spec" --testBaseURL "$base") ;;
  portman)
    node -e '
      const c = require(process.argv[1] + "/node_modules/@apideck/portman/portman-config.default.json");
      c.overwrites = [{ openApiOperation: "*::/*", overwriteRequestSecurity: { apiKey: { value: "{{apiKey}}", key: "X-Service-API-Key", in: "header" } } }];
      require("fs").writeFileSync(process.argv[2], JSON.stringify(c));' "$tools" "$work/portman.json"
    echo "PORTMAN_API_KEY=$key" >"$work/portman.env"
    (cd "$work" && "$tools/node_modules/.bin/portman" -l "$spec" -b "$base" -c "$work/portman.json" --envFile "$work/portman.env" \
      -o "$work/collection.json" --runNewman --newmanRunOptions '{"abortOnFailure":false,"timeoutRequest":10000}') ;;
  stepci)
    stepci_workflow "$base"
    STEPCI_DISABLE_ANALYTICS=1 "$tools/node_modules/.bin/stepci" run "$work/workflow.yml" ;;
  prism-stepci) # Prism as a validating proxy in front of the instance while Step CI's requests pass through it
    "$tools/node_modules/.bin/prism" proxy "$spec" "$base" -p $((port + 1)) --errors >"$work/prism.log" 2>&1 &
    prism=$!
    i=0; until grep -aq "listening on" "$work/prism.log"; do i=$((i + 1)); [ $i -lt 60 ] || { cat "$work/prism.log"; exit 1; }; sleep 1; done
    stepci_workflow "http://localhost:$((port + 1))"
    STEPCI_DISABLE_ANALYTICS=1 "$tools/node_modules/.bin/stepci" run "$work/workflow.yml" || true
    kill "$prism"; echo "Prism's reports:"; grep -a "✖" "$work/prism.log" || echo "none" ;;
  *) echo "unknown tool $tool" >&2; exit 2 ;;
esac
