#!/usr/bin/env bash
# The set-up step of `make run`, `make test`, `make bench` and `make lint`: a virtualenv in .venv with the project
# installed editable at the tested versions -- the README's install command, done for you:
#   python3 -m venv .venv && .venv/bin/python -m pip install -c constraints.txt -e '.[EXTRAS]' && pip check
#
#   tools/venv.sh [EXTRAS]      EXTRAS: "" (run) or "dev" (the test tools); from anywhere
#
# Nothing is done (no pip at all) while .venv/.starroute-lock holds the hash of constraints.txt + pyproject.toml and
# lists the extras asked for and the venv's python still runs. When the lock changed, .venv is made afresh (so a pin
# dropped from constraints.txt does not linger); when only extras are missing, they are installed on top. The stamp
# is written last, so an interrupted install is redone by the next run.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv
stamp="$venv/.starroute-lock"
extras=${1:-}
lock=$(cat constraints.txt pyproject.toml | sha256sum | cut -d' ' -f1)

have_lock='' have_extras=''
if [[ -f $stamp ]]; then
  read -r have_lock have_extras <"$stamp" || true
fi
if [[ $have_lock == "$lock" ]] && "$venv/bin/python" -c '' 2>/dev/null; then
  [[ -z $extras || ",$have_extras," == *",$extras,"* ]] && exit 0
  echo "venv: adding the '$extras' extras to $venv (pip install -c constraints.txt -e '.[$extras]')"
else
  if [[ -d $venv ]]; then
    why=$([[ -n $have_lock ]] && echo "constraints.txt or pyproject.toml changed" || echo "no finished install")
    echo "venv: making $venv afresh ($why)"
  else
    echo "venv: creating $venv"
  fi
  # the system's python3, not the venv's own (a shell where .venv is activated has it first on PATH)
  PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -vxF "$PWD/$venv/bin" | paste -sd:) python3 -m venv --clear "$venv"
  have_extras=''
fi
rm -f "$stamp"
start=$SECONDS
spec=$([[ -n $extras ]] && echo ".[$extras]" || echo ".")
echo "venv: $("$venv/bin/python" --version); pip install -c constraints.txt -e '$spec' (under a minute the first time)"
# pip's "Location ... is ignored: it is neither a file nor a directory" warnings about this machine's optional wheel
# directories are noise; everything else pip says gets through
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -c constraints.txt -e "$spec" \
  2> >(grep -v 'is ignored: it is neither' >&2)
check=$("$venv/bin/python" -m pip check --disable-pip-version-check) || { echo "$check" >&2; exit 1; }
all=$(printf '%s\n' ${have_extras//,/ } $extras | sort -u | paste -sd,)
printf '%s %s\n' "$lock" "$all" >"$stamp.tmp"
mv "$stamp.tmp" "$stamp"
echo "venv: $venv ready in $((SECONDS - start)) s"
