#include "model/mapped_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kvactor::model {

result<mapped_file> mapped_file::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return error_in(path.string(), std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return error_in(path.string(), std::string("cannot stat: ") + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return error_in(path.string(), "not a regular file");
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return mapped_file{};
  }
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd); // NOTE: the mapping stays valid after the descriptor is closed.
  if (p == MAP_FAILED)
    return error_in(path.string(), std::string("cannot mmap: ") + std::strerror(err));
  return mapped_file{static_cast<const std::byte*>(p), size};
}

mapped_file::mapped_file(mapped_file&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

mapped_file& mapped_file::operator=(mapped_file&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

mapped_file::~mapped_file() { reset(); }

void mapped_file::drop_pages() const {
  if (size_ > 0) ::madvise(const_cast<std::byte*>(data_), size_, MADV_DONTNEED);
}

void mapped_file::reset() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

} // namespace kvactor::model
