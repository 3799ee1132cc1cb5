# Shell functions shared by deploy.sh and fleet.sh (sourced, not run).

# Quotes a word for a shell on the other side of ssh, or for a generated script.
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

# A path as one word for the shell on the board: quoted, but a leading ~ left to that
# shell ("$HOME"), so ~/boardbench is the board's home, not the laptop's.
remote_path() {
    case $1 in
        "~") printf '"$HOME"' ;;
        "~/"*) printf '"$HOME"/%s' "$(quote "${1#"~/"}")" ;;
        *) quote "$1" ;;
    esac
}
