#pragma once
// The placeholder a data pane shows while it has nothing to show, so an empty
// pane says why instead of looking broken.
#include <QLabel>

namespace ampscope::ui {

inline constexpr char kProfilerHint[] =
    "Profiling data appears here once the profiler is attached.";

inline QLabel* makeHintLabel(const QString& text, QWidget* parent = nullptr) {
  auto* label = new QLabel(text, parent);
  label->setObjectName(QStringLiteral("paneHint"));
  label->setAlignment(Qt::AlignCenter);
  label->setWordWrap(true);
  label->setForegroundRole(QPalette::PlaceholderText);
  label->setMargin(16);
  return label;
}

}  // namespace ampscope::ui
