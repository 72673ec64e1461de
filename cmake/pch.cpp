// Source of the shared precompiled torch header (cmake/Targets.cmake).
