# Turns a text file into a NUL-terminated C char array (hex bytes: no
# escaping pitfalls, no over-long string literals under -Wpedantic).
#   cmake -DIN=file.js -DOUT=file.c -DNAME=symbol -P embed.cmake
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE ${OUT} "/* Generated from ${IN} by embed.cmake. */\nconst char ${NAME}[] = {\n${bytes}0x00};\n")
