"""drape for Houdini: the shelf tool's module (README.md, "Houdini shelf tool").

`runner` is plain Python (no `hou`): command lines, scene files, progress parsing, cancel.
`tool` holds the few lines that call `hou`."""
