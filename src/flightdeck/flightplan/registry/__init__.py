"""OCI registries: image references, resolving a tag to a digest at freeze,
and the HTTP session every registry request goes through (redirect, token
and size policy); launch pulls images with the same resolver. Publishing to
a registry belongs here too. It imports only flightplan's error class, and
httpx. Import-free: its names are public through `flightdeck.flightplan`."""
