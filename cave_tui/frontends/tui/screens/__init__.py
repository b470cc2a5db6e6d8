"""Modal screens: confirm, approve code, variable detail, help (loaded when first shown)."""
