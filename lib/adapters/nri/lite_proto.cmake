# Copies NRI's api.proto into the build dir with protobuf-lite's option
# appended: the plugin needs no reflection, and libprotobuf-lite is a quarter
# of libprotobuf when linked statically. Run with -DIN=... -DOUT=...
file(READ "${IN}" text)
string(REGEX REPLACE "option optimize_for[^;]*;" "" text "${text}")
file(WRITE "${OUT}" "${text}\noption optimize_for = LITE_RUNTIME;\n")
