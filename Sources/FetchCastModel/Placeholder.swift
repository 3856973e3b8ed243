public enum ModelPlaceholder {}
