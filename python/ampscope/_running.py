"""The capture recording now, if any (captures cannot nest): set by Capture.start() and
cleared by stop(); read by the torch patches (_torch_patches.py) and by ampscope.watch()
and ampscope.step()."""

capture = None
