"""The side-by-side benchmark of drape against Blender's cloth modifier (issue 8, item 1).

scripts/bench_vs_blender.py is the command; this package holds its parts:

- `metrics`: the quality figures, computed from point caches (PC2) and meshes, the same
  definitions for both engines (maximum edge stretch, deepest penetration into the body);
- `scenes`: the scenes built in Blender (`bpy`), exported for drape, and the mapping of
  drape's physical parameters onto Blender's cloth settings;
- `engines`: running a scene through drape (the release binary) and through Blender's
  cloth modifier, timing both.
"""
