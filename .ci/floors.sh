#!/usr/bin/env bash
# The declared version floors are true: install rkcore with every extra at the lowest versions its
# pyproject.toml allows (uv's lowest-direct resolution: direct dependencies at their floors, the
# rest at their newest compatible release) into a fresh venv, and run the library's and the app's
# state tests on them. Usage: bash .ci/floors.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python -m pip install --quiet uv
python -m uv venv --quiet --python "$(command -v python)" "$WORK/floors"
python -m uv pip install --quiet --python "$WORK/floors/bin/python" --resolution lowest-direct -e ".[test]"
echo "== the floors installed:"
python -m uv pip list --python "$WORK/floors/bin/python" 2>/dev/null \
  | grep -i -E "^(numpy|scipy|scikit-learn|pandas|joblib|threadpoolctl|plotly|streamlit|dask|pyarrow|pytest|hypothesis) " || true
# The library's tests plus the app's state and run-protocol tests (the streamlit floor); browser and
# fuzz tests stay with the main run.
"$WORK/floors/bin/python" -m pytest -q -p no:cacheprovider -m "not browser and not fuzz" \
  tests/base tests/kernels tests/maps tests/theory tests/data tests/learners tests/studies tests/ecosystem/test_packaging.py tests/ecosystem/test_dask.py \
  tests/ecosystem/test_docs.py::test_doctests tests/app/test_app_state.py "$@"
# The app's own floor (the [app] extra) is older than the test harness's (AppTest.query_params as str
# from 1.65): run the app's pages at the app's floor on tests that do not read AppTest's query_params.
APP_FLOOR="$(python -c 'import re, tomllib; app = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["app"]; print(re.search(r"streamlit>=([0-9.]+)", " ".join(app)).group(1))')"
python -m uv pip install --quiet --python "$WORK/floors/bin/python" "streamlit==$APP_FLOOR"
echo "== the app at streamlit $APP_FLOOR"
"$WORK/floors/bin/python" -m pytest -q -p no:cacheprovider -m "not browser and not fuzz" \
  tests/pages/test_pages_foundations.py tests/app/test_run_protocol.py
