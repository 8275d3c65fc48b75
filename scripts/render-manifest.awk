# Renders krew-manifest.yaml, a krew-release-bot template, the way the bot does, with the sums of local
# archives instead of downloaded ones:
#   {{ .TagName }}                                  -> tag
#   {{ addURIAndSha "https://.../{{ .TagName }}/ARCHIVE" .TagName }}
#                                                   -> uri: https://.../tag/ARCHIVE
#                                                      sha256: "<ARCHIVE's line in SHA256SUMS>"
# A platform whose archive is not in SHA256SUMS is left out; its os/arch is printed on stdout.
# Variables: tag, sums (a SHA256SUMS file), out (the rendered manifest).

BEGIN {
    while ((getline line < sums) > 0) {
        split(line, field, /[ \t]+\*?/)
        sum[field[2]] = field[1]
    }
    close(sums)
    printf "" > out
    in_platform = 0
}

function flush() {
    if (in_platform && keep) printf "%s", block >> out
    block = ""
    in_platform = 0
}

function emit(text) {
    if (in_platform) block = block text "\n"
    else print text >> out
}

# The template's own opening comment says what the template is: the manifest does not carry it.
!started && /^#/ { next }
{ started = 1 }

{
    gsub(/\{\{ *\.TagName *\}\}/, tag)
}

# A platform entry starts with "  - selector:" and ends at the next line indented two spaces or less.
/^  - / {
    flush()
    in_platform = 1
    keep = 1
    os = ""
    arch = ""
}
in_platform && (/^[^ -]/ || /^ [^ -]/ || /^  [^ -]/) { flush() }
in_platform && /^ +os: / { os = $2 }
in_platform && /^ +arch: / { arch = $2 }

/\{\{ *addURIAndSha / {
    match($0, /^ */)
    pad = substr($0, 1, RLENGTH)
    match($0, /"[^"]*"/)
    uri = substr($0, RSTART + 1, RLENGTH - 2)
    n = split(uri, part, "/")
    archive = part[n]
    if (archive in sum) {
        emit(pad "uri: " uri)
        emit(pad "sha256: \"" sum[archive] "\"")
    } else {
        keep = 0
        missing = missing (missing == "" ? "" : " ") os "/" arch " (" archive ")"
    }
    next
}

{ emit($0) }

END {
    flush()
    print missing
}
