#pragma once
// A pane's content in a frameless scroll area that resizes it: the pane can be made
// shorter or narrower than its content's least size and scrolls then, instead of
// holding the window larger than a laptop's screen (the gradients pane and the
// comparison page held it at 1,562 x 943 pixels).
#include <QScrollArea>

namespace ampscope::ui {

inline QScrollArea* inScrollArea(QWidget* content) {
  auto* scroll = new QScrollArea;
  scroll->setWidget(content);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  return scroll;
}

}  // namespace ampscope::ui
