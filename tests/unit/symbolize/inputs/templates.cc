// Symbolizer test input: a method of a class template in a namespace, explicitly instantiated
// so its symbol exists.
namespace geo {

template <typename T>
class Box {
 public:
  explicit Box(T value) : value_(value) {}
  T scaled(int factor) const;

 private:
  T value_;
};

template <typename T>
__attribute__((noinline)) T Box<T>::scaled(int factor) const {  // LINE: scaled_decl
  return value_ * factor;                                       // LINE: scaled_body
}

template class Box<double>;

}  // namespace geo
