// Package kubefields writes the field names of the Kubernetes objects hamisim reads from files
// (Pod, Node, ResourceQuota, their Lists, and the DRA kinds in the resource.k8s.io versions
// hamisim decodes), taken by reflection from k8s.io/api itself, as the C++ include
// src/model/kube_fields.inc. hamisim's CLI checks its input files against it to warn about
// unknown fields as `kubectl --validate=warn` does (src/model/unknown_fields.h).
//
// Regenerate after moving k8s.io/api: `cd interop && go run ./kubefields/cmd > ../src/model/kube_fields.inc`;
// TestGeneratedFileIsCurrent fails while the committed file differs.
package kubefields

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Root is one kind the schema covers.
type Root struct {
	APIVersion string
	Kind       string
	Type       reflect.Type
}

// Roots are the kinds covered, in the order written.
func Roots() []Root {
	var roots []Root
	add := func(apiVersion string, objects ...any) {
		for _, o := range objects {
			t := reflect.TypeOf(o)
			roots = append(roots, Root{apiVersion, t.Name(), t})
		}
	}
	add("v1", corev1.Pod{}, corev1.PodList{}, corev1.Node{}, corev1.NodeList{},
		corev1.ResourceQuota{}, corev1.ResourceQuotaList{}, corev1.List{})
	add("resource.k8s.io/v1", resourcev1.ResourceSlice{}, resourcev1.ResourceSliceList{},
		resourcev1.DeviceClass{}, resourcev1.DeviceClassList{}, resourcev1.ResourceClaim{},
		resourcev1.ResourceClaimList{}, resourcev1.ResourceClaimTemplate{},
		resourcev1.ResourceClaimTemplateList{})
	add("resource.k8s.io/v1beta2", resourcev1beta2.ResourceSlice{},
		resourcev1beta2.ResourceSliceList{}, resourcev1beta2.DeviceClass{},
		resourcev1beta2.DeviceClassList{}, resourcev1beta2.ResourceClaim{},
		resourcev1beta2.ResourceClaimList{}, resourcev1beta2.ResourceClaimTemplate{},
		resourcev1beta2.ResourceClaimTemplateList{})
	add("resource.k8s.io/v1beta1", resourcev1beta1.ResourceSlice{},
		resourcev1beta1.ResourceSliceList{}, resourcev1beta1.DeviceClass{},
		resourcev1beta1.DeviceClassList{}, resourcev1beta1.ResourceClaim{},
		resourcev1beta1.ResourceClaimList{}, resourcev1beta1.ResourceClaimTemplate{},
		resourcev1beta1.ResourceClaimTemplateList{})
	return roots
}

var (
	jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	// Values whose content is free-form JSON: any field inside is known.
	anyTypes = map[reflect.Type]bool{
		reflect.TypeOf(runtime.RawExtension{}): true,
		reflect.TypeOf(metav1.FieldsV1{}):      true,
	}
	// Types with their own JSON form that is a scalar.
	scalarTypes = map[reflect.Type]bool{
		reflect.TypeOf(resource.Quantity{}):  true,
		reflect.TypeOf(metav1.Time{}):        true,
		reflect.TypeOf(metav1.MicroTime{}):   true,
		reflect.TypeOf(intstr.IntOrString{}): true,
		reflect.TypeOf(metav1.Duration{}):    true,
	}
)

type writer struct {
	structs map[string][]string // type name -> "field:type" entries
}

// typeName names a struct type by its package's last two path elements ("core/v1.PodSpec").
func typeName(t reflect.Type) string {
	parts := strings.Split(t.PkgPath(), "/")
	if len(parts) >= 2 {
		parts = parts[len(parts)-2:]
	}
	return strings.Join(parts, "/") + "." + t.Name()
}

// expr is the type expression of t: "s" a scalar, "*" anything, "[]T" a list, "{}T" a map
// with string keys, or a struct's name.
func (w *writer) expr(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if anyTypes[t] {
		return "*"
	}
	if scalarTypes[t] {
		return "s"
	}
	switch t.Kind() {
	case reflect.Struct:
		if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
			panic(fmt.Sprintf("%s has its own JSON form: list it as scalar or any", t))
		}
		w.walk(t)
		return typeName(t)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "s" // []byte: base64
		}
		return "[]" + w.expr(t.Elem())
	case reflect.Map:
		return "{}" + w.expr(t.Elem())
	case reflect.Interface:
		return "*"
	default:
		return "s"
	}
}

func (w *writer) fields(t reflect.Type, out *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if (f.Anonymous && name == "") || strings.Contains(","+opts+",", ",inline,") {
			if ft.Kind() == reflect.Struct {
				w.fields(ft, out)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		*out = append(*out, name+":"+w.expr(f.Type))
	}
}

func (w *writer) walk(t reflect.Type) {
	name := typeName(t)
	if _, done := w.structs[name]; done {
		return
	}
	w.structs[name] = nil // marks it in progress (recursive types)
	var fields []string
	w.fields(t, &fields)
	w.structs[name] = fields
}

// Generate returns the C++ include.
func Generate() string {
	w := &writer{structs: map[string][]string{}}
	var b strings.Builder
	b.WriteString("// Generated by interop/kubefields from k8s.io/api v0.37.2: do not edit.\n")
	b.WriteString("// `cd interop && go run ./kubefields/cmd > ../src/model/kube_fields.inc`\n")
	b.WriteString("// Lines: \"@apiVersion Kind Type\" (a root), then \"Type field:expr ...\" where expr is\n")
	b.WriteString("// s (scalar), * (anything), []expr (list), {}expr (map) or a type's name.\n")
	b.WriteString("// clang-format off\n")
	var roots []string
	for _, r := range Roots() {
		roots = append(roots, fmt.Sprintf("\"@%s %s %s\\n\"\n", r.APIVersion, r.Kind, w.expr(r.Type)))
	}
	for _, r := range roots {
		b.WriteString(r)
	}
	names := make([]string, 0, len(w.structs))
	for n := range w.structs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b.WriteString("\"" + n)
		for _, f := range w.structs[n] {
			b.WriteString(" " + f)
		}
		b.WriteString("\\n\"\n")
	}
	return b.String()
}
