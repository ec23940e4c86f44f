#pragma once
#include <QAbstractItemModel>
#include <QList>

namespace tsv {
class Session;

// Tree: schedule contexts (one per realize) -> their passes and the kernel contexts compiled for them ->
// the kernel's codegen passes. Columns: name, matches. Role kContextRole gives a row's context index.
class ContextsModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  enum Role { kContextRole = Qt::UserRole + 1, kPassRole, kColoredNameRole };
  explicit ContextsModel(Session* session, QObject* parent = nullptr);

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

  // the index of the row showing this context (column 0), invalid if none
  QModelIndex index_of_context(int context) const;

 private:
  struct Node {
    int parent = -1;  // node index, -1 for top level
    int row = 0;
    int context = -1;
    int pass = -1;  // -1: the node is the context itself
    QList<int> children;
  };
  void rebuild();
  int add(int parent, int context, int pass);
  Session* session_;
  QList<Node> nodes_;
  QList<int> top_;
};

}  // namespace tsv
