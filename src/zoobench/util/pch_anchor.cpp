// Gives the precompiled-header target a translation unit; it defines nothing.
