#pragma once
// Light or dark on request (`ampscope-ui --color-scheme dark`): Qt 6.4 follows the
// desktop's palette where a platform theme provides one, but has no switch of its
// own, and headless screenshots (offscreen platform) are always light. Every pane
// restyles itself on QEvent::PaletteChange, so this only sets the palette.
#include <QPalette>
#include <QString>


namespace ampscope::ui {

// A dark Fusion palette with readable disabled text, links and tooltips.
QPalette darkPalette();
// "light", "dark" or "system" (leave it to the platform); false for anything else.
bool applyColorScheme(const QString& scheme);

}  // namespace ampscope::ui
