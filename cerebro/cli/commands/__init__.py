"""One module per group of commands. Each command parses, makes one Brain call, and renders."""
