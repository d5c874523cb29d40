#include "ui/widgets/file_loader.h"

#include <QFileInfo>
#include <exception>
#include <utility>

#include "profiler/report/findings.h"
#include "profiler/report/html_report.h"
#include "profiler/report/report_data.h"
#include "profiler/store/session_diff.h"

namespace ampscope::ui {

FileLoader::FileLoader(QObject* parent) : QObject(parent) {
  qRegisterMetaType<OpenedFilePtr>();
  qRegisterMetaType<OpenedDiffPtr>();
}

// The worker's jobs end before the inbox goes: a report after the open it follows,
// every result either delivered or dropped with the inbox, never to a destroyed loader.
FileLoader::~FileLoader() { worker_.waitForDone(); }

void FileLoader::waitForDone() { worker_.waitForDone(); }

template <typename Done, typename F>
void FileLoader::post(uint64_t generation, Done done, F&& f) {
  // To the GUI thread. The destructor waits for the worker, and the inbox, a
  // member, drops what it still holds when the loader goes, so `this` outlives
  // every call made here. A result of a replaced open (an older generation) is
  // dropped; its job still ends (done).
  inbox_.deliver([this, generation, done = std::move(done), f = std::forward<F>(f)]() mutable {
    done();
    if (generation == 0 || generation == open_generation_) f();
  });
}

void FileLoader::begin(const QString& what) {
  if (busy_++ == 0) emit busyChanged(true, what);
}

void FileLoader::end() {
  if (--busy_ == 0) emit busyChanged(false, {});
}

bool FileLoader::open(const QString& path) { return start(path, false); }

bool FileLoader::refresh(const QString& path) { return start(path, true); }

bool FileLoader::start(const QString& path, bool refresh) {
  if (!io_) return false;
  const uint64_t generation = ++open_generation_;
  if (!refresh) begin(tr("Opening %1…").arg(QFileInfo(path).fileName()));
  // Delivered whatever happens to the result, so the busy note always ends.
  const auto done = [this, refresh] {
    if (!refresh) end();
  };
  SessionIO* io = io_;
  worker_.run([this, io, path, generation, refresh, done] {
    try {
      LoadedFile loaded = io->load(path.toStdString());
      auto file = std::make_shared<OpenedFile>();
      file->path = path;
      file->refresh = refresh;
      // The comparison's report (summaries, matched ops, verdict) is made here too, off the GUI thread.
      if (loaded.comparison) file->comparison = makeComparisonResults(std::move(*loaded.comparison), path, true);
      else file->session = std::move(loaded.session);
      post(generation, done, [this, file = OpenedFilePtr(std::move(file))] { emit opened(file); });
    } catch (const std::exception& e) {
      post(generation, done, [this, path, refresh, message = QString::fromUtf8(e.what())] {
        emit openFailed(path, message, refresh);
      });
    }
  });
  return true;
}

bool FileLoader::openRanks(const QStringList& paths) {
  if (paths.isEmpty()) return false;
  const uint64_t generation = ++open_generation_;
  begin(tr("Comparing %1 ranks…").arg(paths.size()));
  const auto done = [this] { end(); };
  worker_.run([this, paths, generation, done] {
    std::vector<std::string> files;
    for (const QString& p : paths) files.push_back(p.toStdString());
    try {
      auto file = std::make_shared<OpenedFile>();
      file->path = paths.front();
      file->ranks = std::make_shared<const profiler::ReportData>(profiler::rank_report(files));
      post(generation, done, [this, file = OpenedFilePtr(std::move(file))] { emit opened(file); });
    } catch (const std::exception& e) {
      post(generation, done, [this, path = paths.front(), message = QString::fromUtf8(e.what())] {
        emit openFailed(path, message, false);
      });
    }
  });
  return true;
}

void FileLoader::openDiff(const QString& eager_path, const QString& compiled_path) {
  begin(tr("Comparing %1 and %2…").arg(QFileInfo(eager_path).fileName(), QFileInfo(compiled_path).fileName()));
  worker_.run([this, eager_path, compiled_path] {
    try {
      auto opened = std::make_shared<OpenedDiff>();
      opened->eager_path = eager_path;
      opened->compiled_path = compiled_path;
      opened->diff = profiler::diff_sessions(eager_path.toStdString(), compiled_path.toStdString());
      post(0, [this] { end(); }, [this, opened = OpenedDiffPtr(std::move(opened))] { emit diffOpened(opened); });
    } catch (const std::exception& e) {
      post(0, [this] { end(); }, [this, message = QString::fromUtf8(e.what())] { emit diffFailed(message); });
    }
  });
}

void FileLoader::writeReport(const QString& source, const QString& path) {
  begin(tr("Writing %1…").arg(QFileInfo(path).fileName()));
  worker_.run([this, source, path] {
    try {
      profiler::write_html_report(profiler::load_report(source.toStdString()), path.toStdString());
      post(0, [this] { end(); }, [this, path] { emit reportWritten(path); });
    } catch (const std::exception& e) {
      post(0, [this] { end(); }, [this, path, message = QString::fromUtf8(e.what())] { emit reportFailed(path, message); });
    }
  });
}

void FileLoader::writeExport(const QString& source, profiler::ExportFormat format, const QString& target) {
  begin(tr("Exporting %1…").arg(QFileInfo(target).fileName()));
  worker_.run([this, source, format, target] {
    try {
      const QString what = QString::fromStdString(
          profiler::export_recorded_file(source.toStdString(), format, target.toStdString()));
      post(0, [this] { end(); }, [this, target, what] { emit exportWritten(target, what); });
    } catch (const std::exception& e) {
      post(0, [this] { end(); },
           [this, target, message = QString::fromUtf8(e.what())] { emit exportFailed(target, message); });
    }
  });
}

void FileLoader::readFindings(const QString& path, bool so_far) {
  if (!so_far) begin(tr("Reading the findings of %1…").arg(QFileInfo(path).fileName()));
  const auto done = [this, so_far] {
    if (!so_far) end();
  };
  worker_.run([this, path, so_far, done] {
    try {
      const profiler::SessionView view = profiler::load_session_view(path.toStdString(), profiler::kReportViewOptions);
      FindingsPtr read = std::make_shared<const ReadFindings>(
          ReadFindings{profiler::session_findings(view), view.steps.empty() ? 0 : view.steps.back().step});
      post(0, done, [this, path, read, so_far] { emit findingsRead(path, read, so_far); });
    } catch (const std::exception& e) {
      post(0, done, [this, path, so_far, message = QString::fromUtf8(e.what())] {
        emit findingsFailed(path, message, so_far);
      });
    }
  });
}

}  // namespace ampscope::ui
