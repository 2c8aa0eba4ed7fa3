# cmake -DIN=api.proto -DOUT=copy.proto -P strip-gogo.cmake
# Copies a proto without gogoproto's import and file-level options, which only
# steer Go code generation (the CRI api.proto carries them).
file(READ "${IN}" text)
string(REGEX REPLACE "import \"github.com/gogo/[^\"]*\";\n" "" text "${text}")
string(REGEX REPLACE "option \\(gogoproto\\.[^\n]*\n" "" text "${text}")
if(text MATCHES "gogoproto")
  message(FATAL_ERROR "${IN}: gogoproto options left that strip-gogo.cmake does not know")
endif()
file(WRITE "${OUT}.tmp" "${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
