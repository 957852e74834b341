#!/usr/bin/env bash
# Build the documentation site (docs/) with warnings as errors; the gallery's examples (examples/plot_*.py)
# run during the build. Installs the [docs] extra first (Sphinx, numpydoc, sphinx-gallery, the theme,
# MyST, matplotlib, a local MathJax), then checks that the HTML loads nothing from the network.
# Usage: bash .ci/docs.sh   (from the repository root; output in docs/_build/html)
set -euo pipefail
cd "$(dirname "$0")/.."

python -m pip install --quiet --disable-pip-version-check -e ".[docs]"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" MPLBACKEND=Agg
rm -rf docs/_build/html
python -m sphinx -W --keep-going -b html docs docs/_build/html
python docs/check_offline.py docs/_build/html
