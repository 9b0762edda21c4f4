"""The text syntax of sira: lexer, concrete syntax tree and parser."""
