#include "cel/selector.h"

#include "cel/ast.h"

namespace hamisim::cel {

Result<Selector> Selector::compile(std::string_view expression) {
  auto root = detail::parse(expression);
  if (!root) return root.error();
  auto program = std::make_shared<detail::Program>();
  program->expression = std::string(expression);
  program->root = std::move(root).value();
  return Selector(std::move(program));
}

Result<bool> Selector::matches(const Device& device) const {
  if (!program_) return make_error("CEL selector used after it was moved from");
  auto v = detail::evaluate(*program_->root, device);
  if (!v) return v.error();
  if (v->type != detail::Type::kBool) {
    return make_error("CEL result of type " + std::string(detail::type_name(v->type)) +
                      " could not be converted to bool");
  }
  return v->b;
}

const std::string& Selector::expression() const {
  static const std::string empty;
  return program_ ? program_->expression : empty;
}

}  // namespace hamisim::cel
