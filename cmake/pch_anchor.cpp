// Compiles the shared precompiled header (cmake/torch_pch.h); nothing else.
