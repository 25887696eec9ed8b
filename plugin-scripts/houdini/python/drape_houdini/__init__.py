"""drape for Houdini: the shelf tool's module (SPEC "Houdini").

`runner` is plain Python (no `hou`): command lines, scene files, progress parsing, cancel.
`tool` holds the few lines that call `hou`."""
