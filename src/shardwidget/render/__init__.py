"""Static renderers: terminal text, SVG pictures, snapshots, PNG, colours, legends."""
