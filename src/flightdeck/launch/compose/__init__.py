"""Composing a plan's catalog tools into one image at freeze (issue 32):
`_feature` fetches a Dev Container Feature by its digest and unpacks its
tarball with the image unpacker, `_install` runs its `install.sh` as root in
a bubblewrap sandbox over a writable copy of the rootfs with no network (an
attempt through the egress relay is recorded and refused), and `_composer`
(`FeatureComposer`, the `ImageComposer` freeze receives) turns each
install's changes into a layer and stores the image in the image cache. It
imports `launch.core`, `launch.image` (pull, unpack, layers, cache) and
`launch.sandbox` (the egress relay).
"""
