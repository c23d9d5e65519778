"""The knowledge base: governed shared documents retrieved through the same pipeline as
memories. ``loaders`` turn files into sections, ``chunkers`` cut sections into chunks that
keep their section path."""
