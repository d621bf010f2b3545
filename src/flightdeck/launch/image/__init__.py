"""OCI images for tool steps: pulling a pinned image from its registry
within the pull limits (`_pull`, `_pull_limits`), unpacking its layers into
a rootfs through descriptors only (`_tar` reads a layer, `_rootfs` writes
the tree, `_unpack` applies the layers, `_fdtree` walks and removes trees at
any depth), and the content-addressed cache of unpacked images (`_cache`,
`ImageCache`). Image composition belongs here too. It imports `launch.core`
only; `launch.sandbox` runs a step inside what it unpacks.
"""
