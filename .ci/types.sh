#!/usr/bin/env bash
# The type check (issue 40): mypy with pyproject.toml's [tool.mypy] on the package and on a typed user
# script, 0 errors each. Installs the [typecheck] extra's requirements (mypy and the stubs) by name, without
# reinstalling rkcore itself. Usage: bash .ci/types.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python - <<'PY'
import subprocess, sys, tomllib
requirements = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["typecheck"]
subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *requirements], check=True)
PY
python -m mypy --version
python -m mypy                                   # the package: [tool.mypy] packages = ["rkcore"]
python -m mypy tests/typing/user_script.py       # a user's script: public results are typed, not Any
echo "types: 0 errors"
