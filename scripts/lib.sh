# Shell functions shared by deploy.sh and fleet.sh (sourced, not run).

# Quotes a word for a shell on the other side of ssh, or for a generated script.
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
