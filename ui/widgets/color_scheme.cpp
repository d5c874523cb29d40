#include "ui/widgets/color_scheme.h"

#include <QApplication>
#include <QStyle>
#include <QStyleFactory>

namespace ampscope::ui {

QPalette darkPalette() {
  QPalette p;
  const QColor window(0x2b, 0x2d, 0x31), base(0x1e, 0x1f, 0x22), text(0xe6, 0xe6, 0xe6);
  const QColor disabled(0x80, 0x80, 0x80), highlight(0x3d, 0x7e, 0xd6);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, QColor(0x26, 0x28, 0x2c));
  p.setColor(QPalette::ToolTipBase, QColor(0x37, 0x39, 0x3e));
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9a, 0x9a));
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
  p.setColor(QPalette::Light, QColor(0x3a, 0x3c, 0x41));
  p.setColor(QPalette::Midlight, QColor(0x33, 0x35, 0x3a));
  p.setColor(QPalette::Mid, QColor(0x25, 0x26, 0x29));
  p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
  p.setColor(QPalette::Shadow, Qt::black);
  p.setColor(QPalette::Highlight, highlight);
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Link, QColor(0x6c, 0xb0, 0xff));
  p.setColor(QPalette::LinkVisited, QColor(0xb0, 0x8c, 0xf0));
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
    p.setColor(QPalette::Disabled, role, disabled);
  p.setColor(QPalette::Disabled, QPalette::Base, window);
  return p;
}

bool applyColorScheme(const QString& scheme) {
  if (scheme == QLatin1String("system")) return true;
  if (scheme != QLatin1String("dark") && scheme != QLatin1String("light")) return false;
  // Fusion draws from the palette alone, so both schemes look as designed everywhere.
  QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
  QApplication::setPalette(scheme == QLatin1String("dark") ? darkPalette() : QApplication::style()->standardPalette());
  return true;
}

}  // namespace ampscope::ui
