#!/usr/bin/env bash
# The installed app: build the sdist and, from it, the wheel (not editable); `twine check --strict` both;
# the library alone must not pull streamlit or plotly; install the wheel with its [app] extra into a
# fresh venv, start `rkcore-app` on 127.0.0.1, check /_stcore/health and fetch a page. Needs only PyPI.
# Usage: bash .ci/check_wheel.sh [port]   (default 8611)
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${1:-8611}"
WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "== build the sdist, then the wheel from it; twine check both"
python -m pip install --quiet build twine
python -m build --outdir "$WORK/dist" . > "$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
if grep -E "SetuptoolsDeprecationWarning|SetuptoolsWarning" "$WORK/build.log"; then echo "packaging warnings"; exit 1; fi
python -m twine check --strict "$WORK"/dist/*
WHEEL="$(ls "$WORK"/dist/rkcore-*.whl)"
echo "$WHEEL"
python - "$WHEEL" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ["rkapp/app.py", "rkapp/.streamlit/config.toml", "rkapp/pages/Home.py", "rkapp/pages/1_Gram_matrices.py",
        "rkapp/state.py", "rkcore/spec.py", "rkcore/py.typed", "rkcore/data/lessons/story.json"]
missing = [n for n in need if n not in names]
top = sorted({n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))})
assert not missing, f"missing from the wheel: {missing}"
assert top == ["rkapp", "rkcore"], f"top-level entries of the wheel: {top}"
print(f"wheel holds {len(names)} files; top level: {top}")
PY

echo "== the library alone brings neither streamlit nor plotly"
python -m pip install --quiet --dry-run --ignore-installed --report "$WORK/report.json" "$WHEEL"
python - "$WORK/report.json" <<'PY'
import json, sys
names = sorted(item["metadata"]["name"].lower() for item in json.load(open(sys.argv[1]))["install"])
heavy = [n for n in names if n in {"streamlit", "plotly", "pyarrow", "dask", "pytest"}]
assert not heavy, f"pip install rkcore would bring {heavy}"
print(f"pip install rkcore: {len(names)} packages: {', '.join(names)}")
PY

echo "== install it into a fresh venv"
# --system-site-packages reuses what this machine has installed (fast); on a clean machine pip fetches
# the dependencies from PyPI. Either way the wheel itself is installed, not the source tree.
python -m venv --system-site-packages "$WORK/venv"
"$WORK/venv/bin/python" -m pip install --quiet "${WHEEL}[app]"
cd "$WORK"  # away from the source tree: nothing may be imported from it
"$WORK/venv/bin/python" -c "import rkapp, rkcore; print('rkapp from', rkapp.__file__); assert '$WORK' in rkapp.__file__"

echo "== start rkcore-app on 127.0.0.1:$PORT"
"$WORK/venv/bin/rkcore-app" --server.headless true --server.port "$PORT" --server.address 127.0.0.1 \
  --server.fileWatcherType none --browser.gatherUsageStats false > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
URL="http://127.0.0.1:$PORT"
get() { python -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$1"; }
for _ in $(seq 1 120); do
  if get "$URL/_stcore/health" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then cat "$WORK/server.log"; echo "rkcore-app exited early"; exit 1; fi
  sleep 0.5
done
get "$URL/_stcore/health" | grep -q ok || { cat "$WORK/server.log"; echo "no health answer"; exit 1; }
echo "health: ok"

echo "== render a page (the Gram page, headless through the installed package)"
"$WORK/venv/bin/python" - <<'PY'
from pathlib import Path
import rkapp
from streamlit.testing.v1 import AppTest
root = Path(rkapp.__file__).parent
at = AppTest.from_file(str(root / "app.py"), default_timeout=120).run()
assert not at.exception, [e.message for e in at.exception]
assert at.title[0].value == "Random Kernel Explorer", at.title
at.switch_page("pages/1_Gram_matrices.py").run()
assert not at.exception, [e.message for e in at.exception]
charts = [c for c in at.get("plotly_chart") if "rkapp-chart-preload" not in c.proto.spec]  # not the off-screen preload
assert at.title[0].value == "Gram matrices" and len(charts) == 1  # the default view: K and K̂ side by side
print("Home and Gram matrices rendered from", root)
PY
get "$URL/Gram_matrices" | grep -qi "<title>" && echo "GET /Gram_matrices: 200"
grep -i "traceback" "$WORK/server.log" && { echo "traceback in the server log"; exit 1; } || true
echo "wheel check passed"
